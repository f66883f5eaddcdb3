import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SyncReportRecord } from '@licensing/contracts';
import { syncReportsTable } from './sync-report.entity';

@Injectable()
export class SyncReportsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Stores a batch in one statement, whatever its size: the rows travel as one JSON parameter
   * (PostgreSQL's 65,535 bind parameters would otherwise cap a batch). A report already stored is
   * skipped, so redeliveries and re-publications count once. Answers how many rows were new.
   */
  async insert(reports: SyncReportRecord[]): Promise<number> {
    if (reports.length === 0) return 0;
    const [{ inserted }] = await this.dataSource.query<Array<{ inserted: number }>>(
      `WITH inserted AS (
         INSERT INTO ${syncReportsTable(this.dataSource)}
           (report_id, org_id, license_id, product_id, serial, hardware_fingerprint, app_version,
            features_used, seats_in_use, status, received_at)
         SELECT report_id, org_id, license_id, product_id, serial, hardware_fingerprint, app_version,
                features_used, seats_in_use, status, received_at
           FROM jsonb_to_recordset($1::jsonb) AS r(
             report_id uuid, org_id uuid, license_id uuid, product_id uuid, serial text,
             hardware_fingerprint text, app_version text, features_used text[], seats_in_use integer,
             status text, received_at timestamptz)
         ON CONFLICT (report_id) DO NOTHING
         RETURNING 1)
       SELECT count(*)::int AS inserted FROM inserted`,
      [JSON.stringify(reports)],
    );
    return inserted;
  }
}
