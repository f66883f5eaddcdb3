import { Module } from '@nestjs/common';
import { LicensesModule } from '../licenses/licenses.module';
import { RelayFilesService } from './relay-files.service';
import { RelayReportsService } from './relay-reports.service';
import { RelaysController } from './relays.controller';

/** Relays: the files that let one lease a floating license's seats offline, and its usage reports. */
@Module({
  imports: [LicensesModule],
  controllers: [RelaysController],
  providers: [RelayFilesService, RelayReportsService],
})
export class RelaysModule {}
