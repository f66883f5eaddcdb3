import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Raw reports become a table partitioned by day, beside hourly and daily rollups that the consumer
 * keeps up to date as it stores each batch (analytics.store_sync_reports). Hand-written: TypeORM
 * cannot express PARTITION BY. The partitions themselves are created and dropped by the service
 * (partitions/partition-maintenance.ts), never by migrations; existing reports are moved over.
 */
export class PartitionSyncReports1795900000000 implements MigrationInterface {
  name = 'PartitionSyncReports1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`ALTER TABLE "analytics"."sync_reports" RENAME TO "sync_reports_unpartitioned"`);
    await q(`ALTER TABLE "analytics"."sync_reports_unpartitioned" RENAME CONSTRAINT "pk_sync_reports" TO "pk_sync_reports_unpartitioned"`);
    await q(`ALTER TABLE "analytics"."sync_reports_unpartitioned" RENAME CONSTRAINT "ck_sync_reports_seats" TO "ck_sync_reports_unpartitioned_seats"`);
    await q(`DROP INDEX "analytics"."ix_sync_reports_license_received"`);
    await q(`DROP INDEX "analytics"."ix_sync_reports_org_product_received"`);
    await q(`DROP INDEX "analytics"."ix_sync_reports_org_received"`);
    await q(`CREATE TABLE "analytics"."sync_reports" ("report_id" uuid NOT NULL, "org_id" uuid NOT NULL, "license_id" uuid NOT NULL, "product_id" uuid NOT NULL, "serial" character varying(200) NOT NULL, "hardware_fingerprint" character varying(512), "app_version" character varying(64), "features_used" text array NOT NULL DEFAULT '{}', "seats_in_use" integer, "status" character varying(20) NOT NULL, "received_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "ck_sync_reports_seats" CHECK (seats_in_use IS NULL OR seats_in_use >= 0), CONSTRAINT "pk_sync_reports" PRIMARY KEY ("report_id", "received_at")) PARTITION BY RANGE ("received_at")`);
    await q(`CREATE INDEX "ix_sync_reports_license_received" ON "analytics"."sync_reports" ("license_id", "received_at") `);
    await q(`CREATE INDEX "ix_sync_reports_org_received" ON "analytics"."sync_reports" ("org_id", "received_at") `);

    await q(`CREATE TABLE "analytics"."active_licenses_hourly" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "hour" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "license_id" uuid NOT NULL, CONSTRAINT "pk_active_licenses_hourly" PRIMARY KEY ("org_id", "product_id", "hour", "license_id")) PARTITION BY RANGE ("hour")`);
    await q(`CREATE TABLE "analytics"."active_licenses_daily" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "day" date NOT NULL, "license_id" uuid NOT NULL, CONSTRAINT "pk_active_licenses_daily" PRIMARY KEY ("org_id", "product_id", "day", "license_id")) PARTITION BY RANGE ("day")`);
    await q(`CREATE TABLE "analytics"."active_fingerprints_hourly" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "hour" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "fingerprint" character varying(512) NOT NULL, CONSTRAINT "pk_active_fingerprints_hourly" PRIMARY KEY ("org_id", "product_id", "hour", "fingerprint")) PARTITION BY RANGE ("hour")`);
    await q(`CREATE TABLE "analytics"."active_fingerprints_daily" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "day" date NOT NULL, "fingerprint" character varying(512) NOT NULL, CONSTRAINT "pk_active_fingerprints_daily" PRIMARY KEY ("org_id", "product_id", "day", "fingerprint")) PARTITION BY RANGE ("day")`);
    await q(`CREATE TABLE "analytics"."usage_hourly" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "hour" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "syncs" integer NOT NULL, "licenses" integer NOT NULL, "fingerprints" integer NOT NULL, "peak_seats_in_use" integer, CONSTRAINT "pk_usage_hourly" PRIMARY KEY ("org_id", "product_id", "hour")) PARTITION BY RANGE ("hour")`);
    await q(`CREATE TABLE "analytics"."usage_daily" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "day" date NOT NULL, "syncs" integer NOT NULL, "licenses" integer NOT NULL, "fingerprints" integer NOT NULL, "peak_seats_in_use" integer, CONSTRAINT "pk_usage_daily" PRIMARY KEY ("org_id", "product_id", "day")) PARTITION BY RANGE ("day")`);
    await q(`CREATE TABLE "analytics"."feature_usage_hourly" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "hour" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "feature" character varying(100) NOT NULL, "syncs" integer NOT NULL, CONSTRAINT "pk_feature_usage_hourly" PRIMARY KEY ("org_id", "product_id", "hour", "feature")) PARTITION BY RANGE ("hour")`);
    await q(`CREATE TABLE "analytics"."version_usage_hourly" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "hour" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "app_version" character varying(64) NOT NULL, "syncs" integer NOT NULL, CONSTRAINT "pk_version_usage_hourly" PRIMARY KEY ("org_id", "product_id", "hour", "app_version")) PARTITION BY RANGE ("hour")`);

    // The one statement that stores a batch and folds it into the rollups; the bench and this
    // migration call it too. Only reports new to sync_reports count; an active row new to its
    // bucket adds one distinct license or fingerprint. The all-zero product id is the row for every
    // product of the organization (fingerprints may repeat across products, licenses cannot);
    // app_version '' stands for a report without one (a real version is never empty).
    await q(STORE_SYNC_REPORTS_V1);

    // Partitions of one UTC day for the raw and active tables (<table>_pYYYYMMDD), and of its month
    // for the rollups (<table>_pYYYYMM). Idempotent; callers hold the partitions advisory lock.
    await q(`CREATE FUNCTION "analytics"."create_partitions"(d date) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  t text;
  m date := date_trunc('month', d)::date;
BEGIN
  FOREACH t IN ARRAY ARRAY['sync_reports', 'active_licenses_hourly', 'active_fingerprints_hourly',
                           'active_licenses_daily', 'active_fingerprints_daily'] LOOP
    EXECUTE format('CREATE TABLE IF NOT EXISTS analytics.%I PARTITION OF analytics.%I FOR VALUES FROM (%L) TO (%L)',
      t || '_p' || to_char(d, 'YYYYMMDD'), t,
      CASE WHEN t LIKE '%_daily' THEN d::text ELSE d::text || ' 00:00:00+00' END,
      CASE WHEN t LIKE '%_daily' THEN (d + 1)::text ELSE (d + 1)::text || ' 00:00:00+00' END);
  END LOOP;
  FOREACH t IN ARRAY ARRAY['usage_hourly', 'usage_daily', 'feature_usage_hourly', 'version_usage_hourly'] LOOP
    EXECUTE format('CREATE TABLE IF NOT EXISTS analytics.%I PARTITION OF analytics.%I FOR VALUES FROM (%L) TO (%L)',
      t || '_p' || to_char(m, 'YYYYMM'), t,
      CASE WHEN t = 'usage_daily' THEN m::text ELSE m::text || ' 00:00:00+00' END,
      CASE WHEN t = 'usage_daily' THEN (m + interval '1 month')::date::text
           ELSE (m + interval '1 month')::date::text || ' 00:00:00+00' END);
  END LOOP;
END
$fn$`);

    // Reports stored before partitioning move over a day at a time, through the same function.
    await q(`DO $do$
DECLARE
  d date;
BEGIN
  FOR d IN SELECT DISTINCT (received_at AT TIME ZONE 'UTC')::date FROM analytics.sync_reports_unpartitioned ORDER BY 1 LOOP
    PERFORM analytics.create_partitions(d);
    PERFORM analytics.store_sync_reports((
      SELECT jsonb_agg(to_jsonb(r)) FROM analytics.sync_reports_unpartitioned r
       WHERE received_at >= d::timestamp AT TIME ZONE 'UTC' AND received_at < (d + 1)::timestamp AT TIME ZONE 'UTC'));
  END LOOP;
END
$do$`);
    await q(`DROP TABLE "analytics"."sync_reports_unpartitioned"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`DROP FUNCTION "analytics"."create_partitions"(date)`);
    await q(`DROP FUNCTION "analytics"."store_sync_reports"(jsonb)`);
    for (const table of [
      'version_usage_hourly',
      'feature_usage_hourly',
      'usage_daily',
      'usage_hourly',
      'active_fingerprints_daily',
      'active_fingerprints_hourly',
      'active_licenses_daily',
      'active_licenses_hourly',
      'sync_reports',
    ]) {
      await q(`DROP TABLE "analytics"."${table}"`);
    }
    // Down keeps the schema, not the reports: raw rows past retention are gone anyway.
    await q(`CREATE TABLE "analytics"."sync_reports" ("report_id" uuid NOT NULL, "org_id" uuid NOT NULL, "license_id" uuid NOT NULL, "product_id" uuid NOT NULL, "serial" character varying(200) NOT NULL, "hardware_fingerprint" character varying(512), "app_version" character varying(64), "features_used" text array NOT NULL DEFAULT '{}', "seats_in_use" integer, "status" character varying(20) NOT NULL, "received_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "ck_sync_reports_seats" CHECK (seats_in_use IS NULL OR seats_in_use >= 0), CONSTRAINT "pk_sync_reports" PRIMARY KEY ("report_id"))`);
    await q(`CREATE INDEX "ix_sync_reports_license_received" ON "analytics"."sync_reports" ("license_id", "received_at") `);
    await q(`CREATE INDEX "ix_sync_reports_org_product_received" ON "analytics"."sync_reports" ("org_id", "product_id", "received_at") `);
    await q(`CREATE INDEX "ix_sync_reports_org_received" ON "analytics"."sync_reports" ("org_id", "received_at") `);
  }
}

/** The first store_sync_reports; DedupeReportsAndLastSeen replaces it, and restores it on the way down. */
export const STORE_SYNC_REPORTS_V1 = `CREATE FUNCTION "analytics"."store_sync_reports"(reports jsonb) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  stored integer;
BEGIN
  WITH ins AS (
    INSERT INTO analytics.sync_reports (report_id, org_id, license_id, product_id, serial, hardware_fingerprint,
                                        app_version, features_used, seats_in_use, status, received_at)
    SELECT report_id, org_id, license_id, product_id, serial, hardware_fingerprint, app_version,
           coalesce(features_used, '{}'), seats_in_use, status, received_at
      FROM jsonb_to_recordset(reports) AS r(
        report_id uuid, org_id uuid, license_id uuid, product_id uuid, serial text, hardware_fingerprint text,
        app_version text, features_used text[], seats_in_use integer, status text, received_at timestamptz)
    ON CONFLICT (report_id, received_at) DO NOTHING
    RETURNING org_id, product_id, license_id, hardware_fingerprint, app_version, features_used, seats_in_use, received_at),
  n AS (
    SELECT org_id, product_id, license_id, hardware_fingerprint AS fp, app_version, features_used, seats_in_use,
           date_trunc('hour', received_at, 'UTC') AS hour, (received_at AT TIME ZONE 'UTC')::date AS day
      FROM ins),
  lh AS (
    INSERT INTO analytics.active_licenses_hourly (org_id, product_id, hour, license_id)
    SELECT DISTINCT org_id, product_id, hour, license_id FROM n ORDER BY 1, 2, 3, 4
    ON CONFLICT DO NOTHING RETURNING org_id, product_id, hour),
  ld AS (
    INSERT INTO analytics.active_licenses_daily (org_id, product_id, day, license_id)
    SELECT DISTINCT org_id, product_id, day, license_id FROM n ORDER BY 1, 2, 3, 4
    ON CONFLICT DO NOTHING RETURNING org_id, product_id, day),
  fh AS (
    INSERT INTO analytics.active_fingerprints_hourly (org_id, product_id, hour, fingerprint)
    SELECT DISTINCT n.org_id, s.product_id, n.hour, n.fp
      FROM n CROSS JOIN LATERAL (VALUES (n.product_id), ('00000000-0000-0000-0000-000000000000'::uuid)) s(product_id)
     WHERE n.fp IS NOT NULL ORDER BY 1, 2, 3, 4
    ON CONFLICT DO NOTHING RETURNING org_id, product_id, hour),
  fd AS (
    INSERT INTO analytics.active_fingerprints_daily (org_id, product_id, day, fingerprint)
    SELECT DISTINCT n.org_id, s.product_id, n.day, n.fp
      FROM n CROSS JOIN LATERAL (VALUES (n.product_id), ('00000000-0000-0000-0000-000000000000'::uuid)) s(product_id)
     WHERE n.fp IS NOT NULL ORDER BY 1, 2, 3, 4
    ON CONFLICT DO NOTHING RETURNING org_id, product_id, day),
  uh AS (
    INSERT INTO analytics.usage_hourly AS t (org_id, product_id, hour, syncs, licenses, fingerprints, peak_seats_in_use)
    SELECT org_id, product_id, hour, sum(syncs), sum(licenses), sum(fingerprints), max(peak)
      FROM (SELECT n.org_id, s.product_id, n.hour, 1 AS syncs, 0 AS licenses, 0 AS fingerprints, n.seats_in_use AS peak
              FROM n CROSS JOIN LATERAL (VALUES (n.product_id), ('00000000-0000-0000-0000-000000000000'::uuid)) s(product_id)
            UNION ALL
            SELECT lh.org_id, s.product_id, lh.hour, 0, 1, 0, NULL
              FROM lh CROSS JOIN LATERAL (VALUES (lh.product_id), ('00000000-0000-0000-0000-000000000000'::uuid)) s(product_id)
            UNION ALL
            SELECT org_id, product_id, hour, 0, 0, 1, NULL FROM fh) x
     GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (org_id, product_id, hour) DO UPDATE SET
      syncs = t.syncs + excluded.syncs, licenses = t.licenses + excluded.licenses,
      fingerprints = t.fingerprints + excluded.fingerprints,
      peak_seats_in_use = greatest(t.peak_seats_in_use, excluded.peak_seats_in_use)
    RETURNING 1),
  ud AS (
    INSERT INTO analytics.usage_daily AS t (org_id, product_id, day, syncs, licenses, fingerprints, peak_seats_in_use)
    SELECT org_id, product_id, day, sum(syncs), sum(licenses), sum(fingerprints), max(peak)
      FROM (SELECT n.org_id, s.product_id, n.day, 1 AS syncs, 0 AS licenses, 0 AS fingerprints, n.seats_in_use AS peak
              FROM n CROSS JOIN LATERAL (VALUES (n.product_id), ('00000000-0000-0000-0000-000000000000'::uuid)) s(product_id)
            UNION ALL
            SELECT ld.org_id, s.product_id, ld.day, 0, 1, 0, NULL
              FROM ld CROSS JOIN LATERAL (VALUES (ld.product_id), ('00000000-0000-0000-0000-000000000000'::uuid)) s(product_id)
            UNION ALL
            SELECT org_id, product_id, day, 0, 0, 1, NULL FROM fd) x
     GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (org_id, product_id, day) DO UPDATE SET
      syncs = t.syncs + excluded.syncs, licenses = t.licenses + excluded.licenses,
      fingerprints = t.fingerprints + excluded.fingerprints,
      peak_seats_in_use = greatest(t.peak_seats_in_use, excluded.peak_seats_in_use)
    RETURNING 1),
  fe AS (
    INSERT INTO analytics.feature_usage_hourly AS t (org_id, product_id, hour, feature, syncs)
    SELECT n.org_id, n.product_id, n.hour, f.feature, count(*) FROM n CROSS JOIN LATERAL unnest(n.features_used) AS f(feature)
     GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (org_id, product_id, hour, feature) DO UPDATE SET syncs = t.syncs + excluded.syncs
    RETURNING 1),
  ve AS (
    INSERT INTO analytics.version_usage_hourly AS t (org_id, product_id, hour, app_version, syncs)
    SELECT org_id, product_id, hour, coalesce(app_version, ''), count(*) FROM n GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (org_id, product_id, hour, app_version) DO UPDATE SET syncs = t.syncs + excluded.syncs
    RETURNING 1)
  SELECT count(*) INTO stored FROM n;
  RETURN stored;
END
$fn$`;
