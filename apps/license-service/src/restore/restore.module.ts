import { Module } from '@nestjs/common';
import { LicensesModule } from '../licenses/licenses.module';
import { LicenseEventReplay } from './license-event-replay';
import { StreamCheckpoints } from './stream-checkpoints';

/** What a database restored from a backup needs before the service serves again. */
@Module({
  imports: [LicensesModule],
  providers: [LicenseEventReplay, StreamCheckpoints],
  exports: [LicenseEventReplay],
})
export class RestoreModule {}
