import { Module } from '@nestjs/common';
import { PartitionsModule } from '../partitions/partitions.module';
import { SyncReportConsumer } from './sync-report.consumer';
import { SyncReportsRepository } from './sync-reports.repository';

@Module({
  imports: [PartitionsModule],
  providers: [SyncReportConsumer, SyncReportsRepository],
  exports: [SyncReportConsumer],
})
export class ReportsModule {}
