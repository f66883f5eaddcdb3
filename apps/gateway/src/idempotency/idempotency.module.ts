import { Global, Module } from '@nestjs/common';
import { IdempotencyKeySweeper } from './idempotency-key.sweeper';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyService } from './idempotency.service';

/** Idempotency keys of the create routes (`@Idempotent()`), stored in the gateway's schema. */
@Global()
@Module({
  providers: [IdempotencyService, IdempotencyInterceptor, IdempotencyKeySweeper],
  exports: [IdempotencyService, IdempotencyInterceptor],
})
export class IdempotencyModule {}
