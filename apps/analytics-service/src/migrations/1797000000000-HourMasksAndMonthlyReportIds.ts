import { MigrationInterface, QueryRunner } from 'typeorm';
import { STORE_SYNC_REPORTS_V2 } from './1796000000000-DedupeReportsAndLastSeen';

/**
 * Two changes that keep what analytics stores proportional to what it answers, and every expiry a
 * DROP TABLE:
 *
 * - The hourly active tables are gone. Each daily active row (a license, or a machine per product
 *   and per organization, on a UTC day) carries the hours of that day it synced in as a 24-bit
 *   mask (`hours`). A new hour still adds exactly one distinct license or machine to its hourly
 *   counter; a range that cuts a day counts the day's rows whose mask meets the range's whole
 *   hours: one row per license and day instead of one per license and hour. `hours_added` holds
 *   the hours the row's latest write added: PostgreSQL 15 cannot return a row's old value from an
 *   upsert, and the counters need exactly the new hours, even when two batches race on one row.
 * - `sync_report_ids` is partitioned by the UTC month the id was claimed in, and a month's ids are
 *   dropped with their partition once every raw report they could stand for is past retention:
 *   no DELETE of expired ids any more. A report_id is refused if any kept month holds it.
 */
export class HourMasksAndMonthlyReportIds1797000000000 implements MigrationInterface {
  name = 'HourMasksAndMonthlyReportIds1797000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    for (const [table, key] of [
      ['active_licenses', 'license_id'],
      ['active_fingerprints', 'fingerprint'],
    ]) {
      await q(`ALTER TABLE "analytics"."${table}_daily" ADD "hours" integer NOT NULL DEFAULT 0, ADD "hours_added" integer NOT NULL DEFAULT 0`);
      await q(`UPDATE analytics.${table}_daily d SET hours = h.hours, hours_added = h.hours
                 FROM (SELECT org_id, product_id, (hour AT TIME ZONE 'UTC')::date AS day, ${key},
                              bit_or(1 << extract(hour FROM hour AT TIME ZONE 'UTC')::int) AS hours
                         FROM analytics.${table}_hourly GROUP BY 1, 2, 3, 4) h
                WHERE (d.org_id, d.product_id, d.day, d.${key}) = (h.org_id, h.product_id, h.day, h.${key})`);
      await q(`ALTER TABLE "analytics"."${table}_daily" ALTER COLUMN "hours" DROP DEFAULT, ALTER COLUMN "hours_added" DROP DEFAULT`);
      // The mask rides in the primary key's index: the upsert's check and a cut day's count read it
      // from the one index the rows have.
      await q(`ALTER TABLE "analytics"."${table}_daily" DROP CONSTRAINT "pk_${table}_daily"`);
      await q(`ALTER TABLE "analytics"."${table}_daily" ADD CONSTRAINT "pk_${table}_daily" PRIMARY KEY ("org_id", "product_id", "day", "${key}") INCLUDE ("hours")`);
      await q(`DROP TABLE "analytics"."${table}_hourly"`);
    }

    await q(`ALTER TABLE "analytics"."sync_report_ids" RENAME TO "sync_report_ids_unpartitioned"`);
    await q(`ALTER TABLE "analytics"."sync_report_ids_unpartitioned" RENAME CONSTRAINT "pk_sync_report_ids" TO "pk_sync_report_ids_unpartitioned"`);
    await q(`CREATE TABLE "analytics"."sync_report_ids" ("report_id" uuid NOT NULL, "claimed_month" date NOT NULL, CONSTRAINT "pk_sync_report_ids" PRIMARY KEY ("report_id", "claimed_month")) PARTITION BY RANGE ("claimed_month")`);
    await q(`CREATE TABLE "analytics"."report_id_months" ("month" date NOT NULL, CONSTRAINT "pk_report_id_months" PRIMARY KEY ("month"))`);
    await q(CREATE_PARTITIONS_V2);
    await q(`DO $do$
DECLARE
  d date;
BEGIN
  FOR d IN SELECT min((received_at AT TIME ZONE 'UTC')::date) FROM analytics.sync_report_ids_unpartitioned
            GROUP BY date_trunc('month', received_at AT TIME ZONE 'UTC') LOOP
    PERFORM analytics.create_partitions(d);
  END LOOP;
END
$do$`);
    await q(`INSERT INTO analytics.sync_report_ids (report_id, claimed_month)
      SELECT report_id, date_trunc('month', received_at AT TIME ZONE 'UTC')::date FROM analytics.sync_report_ids_unpartitioned`);
    await q(`INSERT INTO analytics.report_id_months (month)
      SELECT DISTINCT claimed_month FROM analytics.sync_report_ids`);
    await q(`DROP TABLE "analytics"."sync_report_ids_unpartitioned"`);

    await q(`DROP FUNCTION "analytics"."store_sync_reports"(jsonb)`);
    await q(STORE_SYNC_REPORTS_V3);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`DROP FUNCTION "analytics"."store_sync_reports"(jsonb)`);
    await q(STORE_SYNC_REPORTS_V2);
    await q(`ALTER TABLE "analytics"."sync_report_ids" RENAME TO "sync_report_ids_partitioned"`);
    await q(`ALTER TABLE "analytics"."sync_report_ids_partitioned" RENAME CONSTRAINT "pk_sync_report_ids" TO "pk_sync_report_ids_partitioned"`);
    await q(`CREATE TABLE "analytics"."sync_report_ids" ("report_id" uuid NOT NULL, "received_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "pk_sync_report_ids" PRIMARY KEY ("report_id"))`);
    await q(`INSERT INTO analytics.sync_report_ids (report_id, received_at)
      SELECT DISTINCT ON (report_id) report_id, received_at FROM analytics.sync_reports ORDER BY report_id, received_at`);
    await q(`DROP TABLE "analytics"."sync_report_ids_partitioned"`);
    await q(`DROP TABLE "analytics"."report_id_months"`);
    await q(CREATE_PARTITIONS_V1);
    // The hourly rows come back as the hours of each daily mask.
    await q(`CREATE TABLE "analytics"."active_licenses_hourly" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "hour" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "license_id" uuid NOT NULL, CONSTRAINT "pk_active_licenses_hourly" PRIMARY KEY ("org_id", "product_id", "hour", "license_id")) PARTITION BY RANGE ("hour")`);
    await q(`CREATE TABLE "analytics"."active_fingerprints_hourly" ("org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "hour" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "fingerprint" character varying(512) NOT NULL, CONSTRAINT "pk_active_fingerprints_hourly" PRIMARY KEY ("org_id", "product_id", "hour", "fingerprint")) PARTITION BY RANGE ("hour")`);
    await q(`DO $do$
DECLARE
  d date;
BEGIN
  FOR d IN SELECT DISTINCT day FROM analytics.active_licenses_daily UNION SELECT DISTINCT day FROM analytics.active_fingerprints_daily LOOP
    PERFORM analytics.create_partitions(d);
  END LOOP;
END
$do$`);
    for (const [table, key] of [
      ['active_licenses', 'license_id'],
      ['active_fingerprints', 'fingerprint'],
    ]) {
      await q(`INSERT INTO analytics.${table}_hourly (org_id, product_id, hour, ${key})
        SELECT org_id, product_id, (day::timestamp + h * interval '1 hour') AT TIME ZONE 'UTC', ${key}
          FROM analytics.${table}_daily, generate_series(0, 23) h WHERE hours & (1 << h) <> 0`);
      await q(`ALTER TABLE "analytics"."${table}_daily" DROP CONSTRAINT "pk_${table}_daily"`);
      await q(`ALTER TABLE "analytics"."${table}_daily" ADD CONSTRAINT "pk_${table}_daily" PRIMARY KEY ("org_id", "product_id", "day", "${key}")`);
      await q(`ALTER TABLE "analytics"."${table}_daily" DROP COLUMN "hours_added", DROP COLUMN "hours"`);
    }
  }
}

/** create_partitions as the PartitionSyncReports migration wrote it. */
const CREATE_PARTITIONS_V1 = createPartitions(
  ['sync_reports', 'active_licenses_hourly', 'active_fingerprints_hourly', 'active_licenses_daily', 'active_fingerprints_daily'],
  ['usage_hourly', 'usage_daily', 'feature_usage_hourly', 'version_usage_hourly'],
  [],
);

/**
 * Partitions of one UTC day (<table>_pYYYYMMDD) and of its month (<table>_pYYYYMM). The daily
 * active rows leave room on each page (fillfactor 70) for the day's updates of their hour masks,
 * so those stay heap-only (no new index entry).
 */
const CREATE_PARTITIONS_V2 = createPartitions(
  ['sync_reports', 'active_licenses_daily', 'active_fingerprints_daily'],
  ['usage_hourly', 'usage_daily', 'feature_usage_hourly', 'version_usage_hourly', 'sync_report_ids'],
  ['active_licenses_daily', 'active_fingerprints_daily'],
);

function createPartitions(daily: string[], monthly: string[], updatedInPlace: string[]): string {
  const list = (tables: string[]) => tables.map((t) => `'${t}'`).join(', ');
  return `CREATE OR REPLACE FUNCTION "analytics"."create_partitions"(d date) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  t text;
  m date := date_trunc('month', d)::date;
BEGIN
  FOREACH t IN ARRAY ARRAY[${list(daily)}] LOOP
    EXECUTE format('CREATE TABLE IF NOT EXISTS analytics.%I PARTITION OF analytics.%I FOR VALUES FROM (%L) TO (%L)',
      t || '_p' || to_char(d, 'YYYYMMDD'), t,
      CASE WHEN t LIKE '%_daily' THEN d::text ELSE d::text || ' 00:00:00+00' END,
      CASE WHEN t LIKE '%_daily' THEN (d + 1)::text ELSE (d + 1)::text || ' 00:00:00+00' END)
      || CASE WHEN t = ANY(ARRAY[${list(updatedInPlace)}]::text[]) THEN ' WITH (fillfactor = 70)' ELSE '' END;
  END LOOP;
  FOREACH t IN ARRAY ARRAY[${list(monthly)}] LOOP
    EXECUTE format('CREATE TABLE IF NOT EXISTS analytics.%I PARTITION OF analytics.%I FOR VALUES FROM (%L) TO (%L)',
      t || '_p' || to_char(m, 'YYYYMM'), t,
      CASE WHEN t IN ('usage_daily', 'sync_report_ids') THEN m::text ELSE m::text || ' 00:00:00+00' END,
      CASE WHEN t IN ('usage_daily', 'sync_report_ids') THEN (m + interval '1 month')::date::text
           ELSE (m + interval '1 month')::date::text || ' 00:00:00+00' END);
  END LOOP;
END
$fn$`;
}

/**
 * store_sync_reports as of this migration.
 *
 * Report ids. The batch's ids go to the partition of the month the statement claims them in. A
 * report_id is new if no earlier kept month holds it and its insert into this month's partition
 * does not conflict, where PostgreSQL's unique index makes concurrent batches wait for each other.
 * Around a month's turn two batches could claim the same id in different months, each unable to see
 * the other's uncommitted row in the other partition; three rules close that:
 *   1. every batch holds a shared advisory lock on the month its clock read before taking it,
 *      until it commits;
 *   2. the first batches of a month (until one has recorded the month in report_id_months) take
 *      the previous month's lock exclusively, so they start only once every batch that locked the
 *      previous month before the turn has committed, and the probe of earlier months sees its ids;
 *   3. a batch whose clock turned between its read and its lock claims its ids in both months, so
 *      it conflicts in the unique index with whichever batch it raced.
 *
 * Active rows. One row per (organization, product, day, license) and per (organization, product
 * and ALL_PRODUCTS, day, machine), with the day's hours as a mask. A row whose mask already holds
 * the batch's hours is left alone (an upsert would lock it even to change nothing, and most
 * reports are of an hour already counted); a report whose hour is not yet in its row's mask sets it, and `hours_added` tells which hours this write added (under a
 * concurrent batch the upsert re-reads the committed row, so an hour is added once). An added hour
 * is one more distinct license or machine in that hour's counters and moves the last-seen hour; a
 * row inserted (hours_added = hours) is one more in its day's counters.
 */
export const STORE_SYNC_REPORTS_V3 = `CREATE FUNCTION "analytics"."store_sync_reports"(reports jsonb) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  stored integer;
  lock_space constant integer := hashtext('analytics:report-ids');
  first_month date;
  claim_month date;
BEGIN
  first_month := date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC')::date;
  PERFORM pg_advisory_xact_lock_shared(lock_space, to_char(first_month, 'YYYYMM')::integer);
  claim_month := date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC')::date;
  IF NOT EXISTS (SELECT 1 FROM analytics.report_id_months WHERE month = first_month) THEN
    PERFORM pg_advisory_xact_lock(lock_space, to_char(first_month - interval '1 month', 'YYYYMM')::integer);
    INSERT INTO analytics.report_id_months (month) VALUES (first_month) ON CONFLICT DO NOTHING;
  END IF;

  WITH batch AS (
    SELECT DISTINCT ON (report_id) *
      FROM jsonb_to_recordset(reports) AS r(
        report_id uuid, org_id uuid, license_id uuid, product_id uuid, serial text, hardware_fingerprint text,
        app_version text, features_used text[], seats_in_use integer, status text, received_at timestamptz)
     ORDER BY report_id, received_at),
  months AS (SELECT DISTINCT m FROM (VALUES (first_month), (claim_month)) v(m)),
  claims AS (
    INSERT INTO analytics.sync_report_ids (report_id, claimed_month)
    SELECT b.report_id, months.m FROM batch b CROSS JOIN months
     WHERE NOT EXISTS (SELECT 1 FROM analytics.sync_report_ids o
                        WHERE o.report_id = b.report_id AND o.claimed_month < first_month)
     ORDER BY 1, 2
    ON CONFLICT (report_id, claimed_month) DO NOTHING
    RETURNING report_id),
  claimed AS (
    SELECT report_id FROM claims GROUP BY report_id HAVING count(*) = (SELECT count(*) FROM months)),
  ins AS (
    INSERT INTO analytics.sync_reports (report_id, org_id, license_id, product_id, serial, hardware_fingerprint,
                                        app_version, features_used, seats_in_use, status, received_at)
    SELECT report_id, org_id, license_id, product_id, serial, hardware_fingerprint, app_version,
           coalesce(features_used, '{}'), seats_in_use, status, received_at
      FROM batch JOIN claimed USING (report_id)
    RETURNING org_id, product_id, license_id, hardware_fingerprint, app_version, features_used, seats_in_use, received_at),
  n AS (
    SELECT org_id, product_id, license_id, hardware_fingerprint AS fp, app_version, features_used, seats_in_use,
           date_trunc('hour', received_at, 'UTC') AS hour, (received_at AT TIME ZONE 'UTC')::date AS day,
           1 << extract(hour FROM received_at AT TIME ZONE 'UTC')::integer AS hour_bit
      FROM ins),
  ld AS (
    INSERT INTO analytics.active_licenses_daily AS t (org_id, product_id, day, license_id, hours, hours_added)
    SELECT * FROM (SELECT org_id, product_id, day, license_id, bit_or(hour_bit) AS hours, bit_or(hour_bit) FROM n
                    GROUP BY 1, 2, 3, 4) g
     WHERE NOT EXISTS (SELECT 1 FROM analytics.active_licenses_daily o
                        WHERE (o.org_id, o.product_id, o.day, o.license_id) = (g.org_id, g.product_id, g.day, g.license_id)
                          AND g.hours & ~o.hours = 0)
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (org_id, product_id, day, license_id) DO UPDATE
      SET hours = t.hours | excluded.hours, hours_added = excluded.hours & ~t.hours
      WHERE excluded.hours & ~t.hours <> 0
    RETURNING org_id, product_id, day, license_id, hours_added, hours_added = hours AS new_day),
  fd AS (
    INSERT INTO analytics.active_fingerprints_daily AS t (org_id, product_id, day, fingerprint, hours, hours_added)
    SELECT * FROM (SELECT n.org_id, s.product_id, n.day, n.fp, bit_or(n.hour_bit) AS hours, bit_or(n.hour_bit)
                     FROM n CROSS JOIN LATERAL (VALUES (n.product_id), ('00000000-0000-0000-0000-000000000000'::uuid)) s(product_id)
                    WHERE n.fp IS NOT NULL GROUP BY 1, 2, 3, 4) g
     WHERE NOT EXISTS (SELECT 1 FROM analytics.active_fingerprints_daily o
                        WHERE (o.org_id, o.product_id, o.day, o.fingerprint) = (g.org_id, g.product_id, g.day, g.fp)
                          AND g.hours & ~o.hours = 0)
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (org_id, product_id, day, fingerprint) DO UPDATE
      SET hours = t.hours | excluded.hours, hours_added = excluded.hours & ~t.hours
      WHERE excluded.hours & ~t.hours <> 0
    RETURNING org_id, product_id, day, fingerprint, hours_added, hours_added = hours AS new_day),
  lh AS (
    SELECT ld.org_id, ld.product_id, ld.license_id, (ld.day::timestamp + h * interval '1 hour') AT TIME ZONE 'UTC' AS hour
      FROM ld CROSS JOIN generate_series(0, 23) h WHERE ld.hours_added & (1 << h) <> 0),
  fh AS (
    SELECT fd.org_id, fd.product_id, fd.fingerprint, (fd.day::timestamp + h * interval '1 hour') AT TIME ZONE 'UTC' AS hour
      FROM fd CROSS JOIN generate_series(0, 23) h WHERE fd.hours_added & (1 << h) <> 0),
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
             WHERE ld.new_day
            UNION ALL
            SELECT org_id, product_id, day, 0, 0, 1, NULL FROM fd WHERE fd.new_day) x
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
