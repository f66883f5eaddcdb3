import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuditModule } from '../audit/audit.module';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysService } from './api-keys.service';
import { OrganizationsService } from './organizations.service';
import { ScopesGuard } from './scopes';

/** Organizations and API keys: the gateway's own data, the one thing it owns rather than forwards. */
@Module({
  imports: [AuditModule],
  controllers: [ApiKeysController],
  providers: [ApiKeysService, OrganizationsService, { provide: APP_GUARD, useClass: ScopesGuard }],
  exports: [ApiKeysService, OrganizationsService],
})
export class IdentityModule {}
