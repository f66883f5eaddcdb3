import { Module } from '@nestjs/common';
import { Readiness } from '@licensing/shared/messaging';
import { OrganizationLimitsService } from './organization-limits.service';
import { RateLimitService } from './rate-limit.service';

/** Rate limits per API key and route class, and per license for activations, in a shared Redis. */
@Module({
  providers: [OrganizationLimitsService, RateLimitService],
  exports: [OrganizationLimitsService, RateLimitService],
})
export class RateLimitsModule {
  constructor(readiness: Readiness, rateLimits: RateLimitService) {
    readiness.add({ name: 'redis', kind: 'degradable', isUp: () => rateLimits.isConnected });
  }
}
