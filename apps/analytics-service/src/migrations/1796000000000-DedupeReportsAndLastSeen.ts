import { MigrationInterface, QueryRunner } from 'typeorm';
import { STORE_SYNC_REPORTS_V1 } from './1795900000000-PartitionSyncReports';

/**
 * Two tables the partitioned reports could not give, and the store function that keeps them:
 *
 * - `sync_report_ids`: every stored report_id, once. The raw table's primary key must hold its
 *   partition column (received_at), so it cannot refuse a report_id that comes back with another
 *   received_at (a client retrying after the stream's duplicate window). Reports carry no time of
 *   the client's that a retry would repeat, so report_id alone is the key, and only a unique index
 *   on one table (not partitioned) makes PostgreSQL refuse the second copy whatever the timing:
 *   a consumer inserting an id that another's open transaction holds waits for it, then skips it.
 *   Its rows leave with their raw partition (PartitionsService.dropExpired).
 * - `license_last_seen`, `fingerprint_last_seen`: the UTC hour each license and machine (per
 *   product, and per organization under the all-zero product) last synced in, so an active window
 *   is one index range count instead of a distinct count over every active row of 30 days.
 *   Hours, not instants: the windows start on whole hours or days, and a row changes at most once
 *   an hour, only when its hourly active row is new.
 */
export class DedupeReportsAndLastSeen1796000000000 implements MigrationInterface {
  name = 'DedupeReportsAndLastSeen1796000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`CREATE TABLE "analytics"."sync_report_ids" ("report_id" uuid NOT NULL, "received_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "pk_sync_report_ids" PRIMARY KEY ("report_id"))`);
    await q(`CREATE TABLE "analytics"."license_last_seen" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "license_id" uuid NOT NULL, "last_seen_hour" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "pk_license_last_seen" PRIMARY KEY ("org_id", "product_id", "license_id"))`);
    await q(`CREATE INDEX "ix_license_last_seen_org_hour" ON "analytics"."license_last_seen" ("org_id", "last_seen_hour", "product_id") `);
    await q(`CREATE TABLE "analytics"."fingerprint_last_seen" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "fingerprint" character varying(512) NOT NULL, "last_seen_hour" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "pk_fingerprint_last_seen" PRIMARY KEY ("org_id", "product_id", "fingerprint"))`);
    await q(`CREATE INDEX "ix_fingerprint_last_seen_org_product_hour" ON "analytics"."fingerprint_last_seen" ("org_id", "product_id", "last_seen_hour") `);

    // From what is stored: a report_id already stored twice (before this table) keeps its first copy.
    await q(`INSERT INTO analytics.sync_report_ids (report_id, received_at)
      SELECT DISTINCT ON (report_id) report_id, received_at FROM analytics.sync_reports ORDER BY report_id, received_at`);
    await q(`INSERT INTO analytics.license_last_seen (org_id, product_id, license_id, last_seen_hour)
      SELECT org_id, product_id, license_id, max(hour) FROM analytics.active_licenses_hourly GROUP BY 1, 2, 3`);
    await q(`INSERT INTO analytics.fingerprint_last_seen (org_id, product_id, fingerprint, last_seen_hour)
      SELECT org_id, product_id, fingerprint, max(hour) FROM analytics.active_fingerprints_hourly GROUP BY 1, 2, 3`);

    await q(`DROP FUNCTION "analytics"."store_sync_reports"(jsonb)`);
    await q(STORE_SYNC_REPORTS_V2);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`DROP FUNCTION "analytics"."store_sync_reports"(jsonb)`);
    await q(STORE_SYNC_REPORTS_V1);
    await q(`DROP TABLE "analytics"."fingerprint_last_seen"`);
    await q(`DROP TABLE "analytics"."license_last_seen"`);
    await q(`DROP TABLE "analytics"."sync_report_ids"`);
  }
}

/**
 * store_sync_reports as of this migration. A batch's reports first claim their report_id in
 * sync_report_ids, in report_id order (two consumers holding the same ids wait for each other in
 * the same order, never in a cycle); only the claimed ones are stored and counted, so a report
 * counts once however late it comes back. One copy per report_id within the batch, the earliest.
 * The last-seen rows move only where an hourly active row is new: an hour already in
 * active_*_hourly was already folded into them.
 */
export const STORE_SYNC_REPORTS_V2 = `CREATE FUNCTION "analytics"."store_sync_reports"(reports jsonb) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  stored integer;
BEGIN
  WITH batch AS (
    SELECT DISTINCT ON (report_id) *
      FROM jsonb_to_recordset(reports) AS r(
        report_id uuid, org_id uuid, license_id uuid, product_id uuid, serial text, hardware_fingerprint text,
        app_version text, features_used text[], seats_in_use integer, status text, received_at timestamptz)
     ORDER BY report_id, received_at),
  claimed AS (
    INSERT INTO analytics.sync_report_ids (report_id, received_at)
    SELECT report_id, received_at FROM batch ORDER BY report_id
    ON CONFLICT (report_id) DO NOTHING
    RETURNING report_id),
  ins AS (
    INSERT INTO analytics.sync_reports (report_id, org_id, license_id, product_id, serial, hardware_fingerprint,
                                        app_version, features_used, seats_in_use, status, received_at)
    SELECT report_id, org_id, license_id, product_id, serial, hardware_fingerprint, app_version,
           coalesce(features_used, '{}'), seats_in_use, status, received_at
      FROM batch JOIN claimed USING (report_id)
    RETURNING org_id, product_id, license_id, hardware_fingerprint, app_version, features_used, seats_in_use, received_at),
  n AS (
    SELECT org_id, product_id, license_id, hardware_fingerprint AS fp, app_version, features_used, seats_in_use,
           date_trunc('hour', received_at, 'UTC') AS hour, (received_at AT TIME ZONE 'UTC')::date AS day
      FROM ins),
  lh AS (
    INSERT INTO analytics.active_licenses_hourly (org_id, product_id, hour, license_id)
    SELECT DISTINCT org_id, product_id, hour, license_id FROM n ORDER BY 1, 2, 3, 4
    ON CONFLICT DO NOTHING RETURNING org_id, product_id, hour, license_id),
  ld AS (
    INSERT INTO analytics.active_licenses_daily (org_id, product_id, day, license_id)
    SELECT DISTINCT org_id, product_id, day, license_id FROM n ORDER BY 1, 2, 3, 4
    ON CONFLICT DO NOTHING RETURNING org_id, product_id, day),
  fh AS (
    INSERT INTO analytics.active_fingerprints_hourly (org_id, product_id, hour, fingerprint)
    SELECT DISTINCT n.org_id, s.product_id, n.hour, n.fp
      FROM n CROSS JOIN LATERAL (VALUES (n.product_id), ('00000000-0000-0000-0000-000000000000'::uuid)) s(product_id)
     WHERE n.fp IS NOT NULL ORDER BY 1, 2, 3, 4
    ON CONFLICT DO NOTHING RETURNING org_id, product_id, hour, fingerprint),
  fd AS (
    INSERT INTO analytics.active_fingerprints_daily (org_id, product_id, day, fingerprint)
    SELECT DISTINCT n.org_id, s.product_id, n.day, n.fp
      FROM n CROSS JOIN LATERAL (VALUES (n.product_id), ('00000000-0000-0000-0000-000000000000'::uuid)) s(product_id)
     WHERE n.fp IS NOT NULL ORDER BY 1, 2, 3, 4
    ON CONFLICT DO NOTHING RETURNING org_id, product_id, day),
  ls AS (
    INSERT INTO analytics.license_last_seen AS t (org_id, product_id, license_id, last_seen_hour)
    SELECT org_id, product_id, license_id, max(hour) FROM lh GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (org_id, product_id, license_id) DO UPDATE SET last_seen_hour = excluded.last_seen_hour
     WHERE t.last_seen_hour < excluded.last_seen_hour
    RETURNING 1),
  fs AS (
    INSERT INTO analytics.fingerprint_last_seen AS t (org_id, product_id, fingerprint, last_seen_hour)
    SELECT org_id, product_id, fingerprint, max(hour) FROM fh GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (org_id, product_id, fingerprint) DO UPDATE SET last_seen_hour = excluded.last_seen_hour
     WHERE t.last_seen_hour < excluded.last_seen_hour
    RETURNING 1),
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
