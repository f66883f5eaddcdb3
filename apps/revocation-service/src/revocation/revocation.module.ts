import { Module } from '@nestjs/common';
import { LicenseEventsService } from '../events/license-events.service';
import { RevocationController } from './revocation.controller';
import { RevocationService } from './revocation.service';
import { SerialStatusesService } from './serial-statuses.service';

@Module({
  controllers: [RevocationController],
  providers: [RevocationService, SerialStatusesService, LicenseEventsService],
})
export class RevocationModule {}
