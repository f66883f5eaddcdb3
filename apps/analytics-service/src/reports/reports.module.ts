import { Module } from '@nestjs/common';
import { SyncReportConsumer } from './sync-report.consumer';
import { SyncReportsRepository } from './sync-reports.repository';

@Module({
  providers: [SyncReportConsumer, SyncReportsRepository],
  exports: [SyncReportConsumer],
})
export class ReportsModule {}
