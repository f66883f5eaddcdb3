import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';

// The rollups the consumer maintains as it stores each batch (analytics.store_sync_reports), all
// partitioned by time: the active tables by day (kept as long as raw reports), the counters by month
// (kept ANALYTICS_ROLLUP_RETENTION_DAYS). TypeORM cannot express the partitioning; these entities
// state every other part of the tables, and the drift test holds them to the migrations.

/** product_id of the rows that count every product of an organization together. */
export const ALL_PRODUCTS = '00000000-0000-0000-0000-000000000000';

/**
 * A license that synced on a UTC day, with the hours of that day it synced in (bit h = hour h).
 * A new row adds one to usage_daily.licenses, a new hour one to that hour's usage_hourly.licenses;
 * `hoursAdded` is what the row's latest write added. The primary key's index includes `hours`
 * (INCLUDE, which TypeORM cannot state; see the HourMasksAndMonthlyReportIds migration).
 */
@Entity({ name: 'active_licenses_daily' })
export class ActiveLicenseDailyEntity {
  @PrimaryColumn('uuid', { name: 'org_id', primaryKeyConstraintName: 'pk_active_licenses_daily' })
  orgId!: string;
  @PrimaryColumn('uuid', { name: 'product_id', primaryKeyConstraintName: 'pk_active_licenses_daily' })
  productId!: string;
  @PrimaryColumn('date', { name: 'day', primaryKeyConstraintName: 'pk_active_licenses_daily' }) day!: string;
  @PrimaryColumn('uuid', { name: 'license_id', primaryKeyConstraintName: 'pk_active_licenses_daily' })
  licenseId!: string;
  @Column('integer') hours!: number;
  @Column('integer', { name: 'hours_added' }) hoursAdded!: number;
}

/** A machine that synced on a UTC day, per product and (ALL_PRODUCTS) for the organization, with its hours. */
@Entity({ name: 'active_fingerprints_daily' })
export class ActiveFingerprintDailyEntity {
  @PrimaryColumn('uuid', { name: 'org_id', primaryKeyConstraintName: 'pk_active_fingerprints_daily' })
  orgId!: string;
  @PrimaryColumn('uuid', { name: 'product_id', primaryKeyConstraintName: 'pk_active_fingerprints_daily' })
  productId!: string;
  @PrimaryColumn('date', { name: 'day', primaryKeyConstraintName: 'pk_active_fingerprints_daily' })
  day!: string;
  @PrimaryColumn('varchar', {
    name: 'fingerprint',
    length: 512,
    primaryKeyConstraintName: 'pk_active_fingerprints_daily',
  })
  fingerprint!: string;
  @Column('integer') hours!: number;
  @Column('integer', { name: 'hours_added' }) hoursAdded!: number;
}

/** Per organization, product (or ALL_PRODUCTS) and UTC hour: what /analytics/usage?interval=hour answers. */
@Entity({ name: 'usage_hourly' })
export class UsageHourlyEntity {
  @PrimaryColumn('uuid', { name: 'org_id', primaryKeyConstraintName: 'pk_usage_hourly' }) orgId!: string;
  @PrimaryColumn('uuid', { name: 'product_id', primaryKeyConstraintName: 'pk_usage_hourly' })
  productId!: string;
  @PrimaryColumn({ ...TIMESTAMP, name: 'hour', primaryKeyConstraintName: 'pk_usage_hourly' }) hour!: Date;
  @Column('integer') syncs!: number;
  @Column('integer') licenses!: number;
  @Column('integer') fingerprints!: number;
  @Column('integer', { name: 'peak_seats_in_use', nullable: true }) peakSeatsInUse!: number | null;
}

@Entity({ name: 'usage_daily' })
export class UsageDailyEntity {
  @PrimaryColumn('uuid', { name: 'org_id', primaryKeyConstraintName: 'pk_usage_daily' }) orgId!: string;
  @PrimaryColumn('uuid', { name: 'product_id', primaryKeyConstraintName: 'pk_usage_daily' })
  productId!: string;
  @PrimaryColumn('date', { name: 'day', primaryKeyConstraintName: 'pk_usage_daily' }) day!: string;
  @Column('integer') syncs!: number;
  @Column('integer') licenses!: number;
  @Column('integer') fingerprints!: number;
  @Column('integer', { name: 'peak_seats_in_use', nullable: true }) peakSeatsInUse!: number | null;
}

/** Reports that listed a feature, per product and hour (the organization's total is their sum). */
@Entity({ name: 'feature_usage_hourly' })
export class FeatureUsageHourlyEntity {
  @PrimaryColumn('uuid', { name: 'org_id', primaryKeyConstraintName: 'pk_feature_usage_hourly' })
  orgId!: string;
  @PrimaryColumn('uuid', { name: 'product_id', primaryKeyConstraintName: 'pk_feature_usage_hourly' })
  productId!: string;
  @PrimaryColumn({ ...TIMESTAMP, name: 'hour', primaryKeyConstraintName: 'pk_feature_usage_hourly' })
  hour!: Date;
  @PrimaryColumn('varchar', {
    name: 'feature',
    length: 100,
    primaryKeyConstraintName: 'pk_feature_usage_hourly',
  })
  feature!: string;
  @Column('integer') syncs!: number;
}

/** Reports per app version, per product and hour; '' is a report without a version. */
@Entity({ name: 'version_usage_hourly' })
export class VersionUsageHourlyEntity {
  @PrimaryColumn('uuid', { name: 'org_id', primaryKeyConstraintName: 'pk_version_usage_hourly' })
  orgId!: string;
  @PrimaryColumn('uuid', { name: 'product_id', primaryKeyConstraintName: 'pk_version_usage_hourly' })
  productId!: string;
  @PrimaryColumn({ ...TIMESTAMP, name: 'hour', primaryKeyConstraintName: 'pk_version_usage_hourly' })
  hour!: Date;
  @PrimaryColumn('varchar', {
    name: 'app_version',
    length: 64,
    primaryKeyConstraintName: 'pk_version_usage_hourly',
  })
  appVersion!: string;
  @Column('integer') syncs!: number;
}

/**
 * The UTC hour a license last synced in (kept while it is within raw retention): `active` counts
 * the rows at or after its window's first hour. A license belongs to one product, so the
 * organization's count is the count over its products.
 */
@Entity({ name: 'license_last_seen' })
@Index('ix_license_last_seen_org_hour', ['orgId', 'lastSeenHour', 'productId'])
export class LicenseLastSeenEntity {
  @PrimaryColumn('uuid', { name: 'org_id', primaryKeyConstraintName: 'pk_license_last_seen' }) orgId!: string;
  @PrimaryColumn('uuid', { name: 'product_id', primaryKeyConstraintName: 'pk_license_last_seen' })
  productId!: string;
  @PrimaryColumn('uuid', { name: 'license_id', primaryKeyConstraintName: 'pk_license_last_seen' })
  licenseId!: string;
  @Column({ ...TIMESTAMP, name: 'last_seen_hour' }) lastSeenHour!: Date;
}

/** The UTC hour a machine last synced in, per product and (ALL_PRODUCTS) for the organization. */
@Entity({ name: 'fingerprint_last_seen' })
@Index('ix_fingerprint_last_seen_org_product_hour', ['orgId', 'productId', 'lastSeenHour'])
export class FingerprintLastSeenEntity {
  @PrimaryColumn('uuid', { name: 'org_id', primaryKeyConstraintName: 'pk_fingerprint_last_seen' })
  orgId!: string;
  @PrimaryColumn('uuid', { name: 'product_id', primaryKeyConstraintName: 'pk_fingerprint_last_seen' })
  productId!: string;
  @PrimaryColumn('varchar', {
    name: 'fingerprint',
    length: 512,
    primaryKeyConstraintName: 'pk_fingerprint_last_seen',
  })
  fingerprint!: string;
  @Column({ ...TIMESTAMP, name: 'last_seen_hour' }) lastSeenHour!: Date;
}

export const ROLLUP_ENTITIES = [
  ActiveLicenseDailyEntity,
  ActiveFingerprintDailyEntity,
  UsageHourlyEntity,
  UsageDailyEntity,
  FeatureUsageHourlyEntity,
  VersionUsageHourlyEntity,
  LicenseLastSeenEntity,
  FingerprintLastSeenEntity,
];
