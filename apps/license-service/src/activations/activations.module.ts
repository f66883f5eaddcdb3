import { Module } from '@nestjs/common';
import { EventsModule } from '@licensing/shared/events';
import { CredentialsModule } from '../credentials/credentials.module';
import { LicensesModule } from '../licenses/licenses.module';
import { ActivationExpirySweeper } from './activation-expiry.sweeper';
import { ActivationsController } from './activations.controller';
import { ActivationsService } from './activations.service';
import { OfflineActivationsService } from './offline-activations.service';
import { LicenseValidator } from './license-validator.service';
import { ProcessesService } from './processes.service';

/** Machine seats (activations with heartbeats), their processes, and validate-by-key. */
@Module({
  imports: [LicensesModule, CredentialsModule, EventsModule],
  controllers: [ActivationsController],
  providers: [
    ActivationsService,
    OfflineActivationsService,
    ProcessesService,
    LicenseValidator,
    ActivationExpirySweeper,
  ],
})
export class ActivationsModule {}
