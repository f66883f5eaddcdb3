import { Module } from '@nestjs/common';
import { Readiness } from '@licensing/shared/messaging';
import { IdentityModule } from '../identity/identity.module';
import { RateLimitService } from './rate-limit.service';

/** Rate limits per API key and route class, and per license for activations, in a shared Redis. */
@Module({
  imports: [IdentityModule],
  providers: [RateLimitService],
  exports: [RateLimitService],
})
export class RateLimitsModule {
  constructor(readiness: Readiness, rateLimits: RateLimitService) {
    readiness.add({ name: 'redis', kind: 'degradable', isUp: () => rateLimits.isConnected });
  }
}
