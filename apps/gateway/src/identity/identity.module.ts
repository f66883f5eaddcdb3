import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuditModule } from '../audit/audit.module';
import { RateLimitsModule } from '../rate-limits/rate-limits.module';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysService } from './api-keys.service';
import { OrganizationSettingsService } from './organization-settings.service';
import { OrganizationsService } from './organizations.service';
import { LicenseTokensController, OrganizationController } from './credentials.controller';
import { ScopesGuard } from './scopes';
import { TokensService } from './tokens.service';

/**
 * Organizations and API keys, the gateway's own data, and the license and machine tokens it
 * resolves from the license service and caches.
 */
@Module({
  imports: [AuditModule, RateLimitsModule],
  controllers: [ApiKeysController, LicenseTokensController, OrganizationController],
  providers: [
    ApiKeysService,
    OrganizationsService,
    OrganizationSettingsService,
    TokensService,
    { provide: APP_GUARD, useClass: ScopesGuard },
  ],
  exports: [ApiKeysService, OrganizationsService, TokensService],
})
export class IdentityModule {}
