import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SyncReportRecord } from '@licensing/contracts';

@Injectable()
export class SyncReportsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Stores a batch and folds it into the rollups in one statement, whatever its size
   * (analytics.store_sync_reports, see the PartitionSyncReports migration): the rows travel as one
   * JSON parameter, so PostgreSQL's 65,535 bind parameters cannot cap a batch. A report already
   * stored is skipped and counts nowhere, so redeliveries and re-publications count once. Answers
   * how many rows were new. The partitions of the batch's days must exist (PartitionsService).
   */
  async insert(reports: SyncReportRecord[]): Promise<number> {
    if (reports.length === 0) return 0;
    const [{ inserted }] = await this.dataSource.query<Array<{ inserted: number }>>(
      'SELECT analytics.store_sync_reports($1::jsonb) AS inserted',
      [JSON.stringify(reports)],
    );
    return inserted;
  }
}
