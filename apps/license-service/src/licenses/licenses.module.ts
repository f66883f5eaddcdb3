import { Module } from '@nestjs/common';
import { EventsModule } from '@licensing/shared/events';
import { CatalogModule } from '../catalog/catalog.module';
import { LicenseCheckoutService } from './license-checkout.service';
import { LicenseExpirySweeper } from './license-expiry.sweeper';
import { LicenseSigner } from './license-signer.service';
import { LicenseUsageService } from './license-usage.service';
import { LicenseUsesResetSweeper } from './license-uses-reset.sweeper';
import { LicenseVerifier } from './license-verifier.service';
import { LicensesController } from './licenses.controller';
import { LicensesService } from './licenses.service';
import { SerialStatusesService } from './serial-statuses.service';

@Module({
  imports: [CatalogModule, EventsModule],
  controllers: [LicensesController],
  providers: [
    LicensesService,
    LicenseVerifier,
    LicenseSigner,
    LicenseUsageService,
    LicenseCheckoutService,
    SerialStatusesService,
    LicenseExpirySweeper,
    LicenseUsesResetSweeper,
  ],
  exports: [LicenseSigner, LicenseCheckoutService],
})
export class LicensesModule {}
