import { Check, Column, DataSource, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';

/**
 * One usage report, as the revocation service accepted it. The table is partitioned by UTC day of
 * received_at (see the PartitionSyncReports migration), so the primary key must hold received_at
 * too, and cannot by itself refuse a report_id that comes back with another received_at:
 * SyncReportIdEntity does.
 */
@Entity({ name: 'sync_reports' })
@Index('ix_sync_reports_org_received', ['orgId', 'receivedAt'])
@Index('ix_sync_reports_license_received', ['licenseId', 'receivedAt'])
@Check('ck_sync_reports_seats', 'seats_in_use IS NULL OR seats_in_use >= 0')
export class SyncReportEntity {
  @PrimaryColumn('uuid', { name: 'report_id', primaryKeyConstraintName: 'pk_sync_reports' })
  reportId!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('uuid', { name: 'license_id' })
  licenseId!: string;

  @Column('uuid', { name: 'product_id' })
  productId!: string;

  @Column('varchar', { length: 200 })
  serial!: string;

  @Column('varchar', { name: 'hardware_fingerprint', length: 512, nullable: true })
  hardwareFingerprint!: string | null;

  @Column('varchar', { name: 'app_version', length: 64, nullable: true })
  appVersion!: string | null;

  @Column('text', { name: 'features_used', array: true, default: () => "'{}'" })
  featuresUsed!: string[];

  @Column('integer', { name: 'seats_in_use', nullable: true })
  seatsInUse!: number | null;

  @Column('varchar', { length: 20 })
  status!: string;

  @PrimaryColumn({ ...TIMESTAMP, name: 'received_at', primaryKeyConstraintName: 'pk_sync_reports' })
  receivedAt!: Date;
}

/** The table's qualified name for hand-written SQL, in whichever schema the DataSource places it. */
export function syncReportsTable(dataSource: DataSource): string {
  const { schema, tableName } = dataSource.getMetadata(SyncReportEntity);
  return schema ? `"${schema}"."${tableName}"` : `"${tableName}"`;
}

/**
 * Every report_id stored in sync_reports, under the UTC month the consumer claimed it in: what
 * makes a report count once however late it comes back (a client retrying after the stream's
 * duplicate window gets a new received_at). Partitioned by that month and dropped a month at a
 * time (PartitionsService); an id is refused if any kept month holds it.
 */
@Entity({ name: 'sync_report_ids' })
export class SyncReportIdEntity {
  @PrimaryColumn('uuid', { name: 'report_id', primaryKeyConstraintName: 'pk_sync_report_ids' })
  reportId!: string;

  @PrimaryColumn('date', { name: 'claimed_month', primaryKeyConstraintName: 'pk_sync_report_ids' })
  claimedMonth!: string;
}

/** The months whose first batches have waited for the previous month's (store_sync_reports). */
@Entity({ name: 'report_id_months' })
export class ReportIdMonthEntity {
  @PrimaryColumn('date', { name: 'month', primaryKeyConstraintName: 'pk_report_id_months' })
  month!: string;
}
