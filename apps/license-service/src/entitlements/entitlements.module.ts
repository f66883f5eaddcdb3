import { Module } from '@nestjs/common';
import { LicensesModule } from '../licenses/licenses.module';
import { EntitlementsController } from './entitlements.controller';
import { EntitlementsService } from './entitlements.service';
import { LicenseEntitlementsService } from './license-entitlements.service';

/** The entitlement catalog, and the entitlements each license holds. */
@Module({
  imports: [LicensesModule],
  controllers: [EntitlementsController],
  providers: [EntitlementsService, LicenseEntitlementsService],
})
export class EntitlementsModule {}
