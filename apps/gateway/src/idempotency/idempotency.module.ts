import { Global, Module } from '@nestjs/common';
import { IdempotencyKeySweeper } from './idempotency-key.sweeper';
import { IdempotencyService } from './idempotency.service';

/**
 * Idempotency keys of the create routes, stored in the gateway's schema. Global, because
 * `@Idempotent()` instantiates its interceptor in whichever module hosts the controller.
 */
@Global()
@Module({
  providers: [IdempotencyService, IdempotencyKeySweeper],
  exports: [IdempotencyService],
})
export class IdempotencyModule {}
