import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuditModule } from '../audit/audit.module';
import { ApiKeysService } from './api-keys.service';
import { OrganizationLimitsService } from './organization-limits.service';
import { OrganizationSettingsService } from './organization-settings.service';
import { OrganizationsService } from './organizations.service';
import { ScopesGuard } from './authorization';
import { TokensService } from './tokens.service';

/**
 * Organizations and API keys, the gateway's own data, their settings and rate limits, and the
 * license and machine tokens it resolves from the license service and caches.
 */
@Module({
  imports: [AuditModule],
  providers: [
    ApiKeysService,
    OrganizationsService,
    OrganizationLimitsService,
    OrganizationSettingsService,
    TokensService,
    { provide: APP_GUARD, useClass: ScopesGuard },
  ],
  exports: [
    ApiKeysService,
    OrganizationsService,
    OrganizationLimitsService,
    OrganizationSettingsService,
    TokensService,
  ],
})
export class IdentityModule {}
