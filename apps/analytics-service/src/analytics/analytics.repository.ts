import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PageRequest, pageWindow } from '@licensing/shared/database';
import { ALL_PRODUCTS } from '../reports/rollup.entity';
import { syncReportsTable } from '../reports/sync-report.entity';

const utcDate = (at: Date): string => at.toISOString().slice(0, 10);

/** Which reports a query looks at: always one organization, `from` inclusive, `to` exclusive. */
export interface ReportScope {
  orgId: string;
  productId?: string;
  from: Date;
  to: Date;
}

interface Page<T> {
  rows: T[];
  total: number;
}

interface UsageBucketRow {
  bucket: Date;
  syncs: number;
  licenses: number;
  fingerprints: number;
  peak_seats_in_use: number | null;
}

interface LicenseUsageRow {
  syncs: number;
  last_sync_at: Date | null;
  peak_seats_in_use: number | null;
  versions: string[];
  fingerprints: Array<{ fingerprint: string; last_sync_at: string }>;
  total: number;
  daily: Array<{ day: string; syncs: number; machines: number }>;
}

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
const floorTo = (at: Date, unit: number): Date => new Date(Math.floor(at.getTime() / unit) * unit);
const ceilTo = (at: Date, unit: number): Date => new Date(Math.ceil(at.getTime() / unit) * unit);

/** The bits of a day's hour mask (bit h = hour h of the UTC day `day`) that `hours` covers. */
export function hourMask(day: Date, hours: Span): number {
  const first = (hours.from.getTime() - day.getTime()) / HOUR_MS;
  const end = (hours.to.getTime() - day.getTime()) / HOUR_MS;
  return 2 ** end - 1 - (2 ** first - 1);
}

/** `[from, to)`; empty when from >= to. */
interface Span {
  from: Date;
  to: Date;
}

/**
 * How a range splits between the rollups of a unit (hour or day) and raw reports: the whole units
 * inside it, and the partial units at its ends (none, one, or two). Pure, for the tests.
 */
export function splitRange(from: Date, to: Date, unit: number): { whole: Span | null; partial: Span[] } {
  const wholeFrom = ceilTo(from, unit);
  const wholeTo = floorTo(to, unit);
  if (wholeFrom.getTime() >= wholeTo.getTime()) {
    if (wholeFrom.getTime() === wholeTo.getTime() && from < wholeFrom && wholeTo < to) {
      return {
        whole: null,
        partial: [
          { from, to: wholeFrom },
          { from: wholeTo, to },
        ],
      };
    }
    return { whole: null, partial: [{ from, to }] };
  }
  const partial: Span[] = [];
  if (from < wholeFrom) partial.push({ from, to: wholeFrom });
  if (wholeTo < to) partial.push({ from: wholeTo, to });
  return { whole: { from: wholeFrom, to: wholeTo }, partial };
}

/** Bind parameters collected as a statement is built. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * The read side. Whole hours and days come from the rollups that the consumer maintains as it
 * stores reports (reports/rollup.entity.ts); only the partial hours at the ends of a range are
 * read from raw reports, so a query costs the number of buckets it answers, not the number of
 * reports behind them. A day bucket that the range cuts (from or to inside it) counts its distinct
 * licenses and machines over that day's active rows (one per license or machine, with the hours it
 * synced in) plus the raw reports of its partial hours. Every statement filters on org_id first,
 * and is one statement, so a page and its total come from the same snapshot even while reports
 * keep arriving.
 */
@Injectable()
export class AnalyticsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  usage(scope: ReportScope, interval: 'hour' | 'day', page: PageRequest): Promise<Page<UsageBucketRow>> {
    const p = new Params();
    const org = p.add(scope.orgId);
    const product = scope.productId === undefined ? null : p.add(scope.productId);
    // Added only where a statement uses it: PostgreSQL refuses a parameter it cannot type.
    let allProducts: string | undefined;
    const rollupProduct = (): string => product ?? (allProducts ??= p.add(ALL_PRODUCTS));
    const parts: string[] = [];
    if (interval === 'hour') {
      const { whole, partial } = splitRange(scope.from, scope.to, HOUR_MS);
      if (whole) {
        parts.push(
          `SELECT hour AS bucket, syncs, licenses, fingerprints, peak_seats_in_use FROM analytics.usage_hourly
            WHERE org_id = ${org} AND product_id = ${rollupProduct()} AND hour >= ${p.add(whole.from)} AND hour < ${p.add(whole.to)}`,
        );
      }
      if (partial.length > 0) {
        parts.push(
          `SELECT date_trunc('hour', received_at, 'UTC') AS bucket, count(*)::int AS syncs,
                  count(DISTINCT license_id)::int AS licenses, count(DISTINCT hardware_fingerprint)::int AS fingerprints,
                  max(seats_in_use) AS peak_seats_in_use
             FROM analytics.sync_reports WHERE ${this.raw(p, org, product, partial)} GROUP BY 1`,
        );
      }
    } else {
      const { whole, partial } = splitRange(scope.from, scope.to, DAY_MS);
      if (whole) {
        parts.push(
          `SELECT day::timestamp AT TIME ZONE 'UTC' AS bucket, syncs, licenses, fingerprints, peak_seats_in_use
             FROM analytics.usage_daily
            WHERE org_id = ${org} AND product_id = ${rollupProduct()}
              AND day >= ${p.add(utcDate(whole.from))}::date AND day < ${p.add(utcDate(whole.to))}::date`,
        );
      }
      for (const day of partial) {
        const cut = this.partialDay(p, org, product, rollupProduct, day);
        const start = floorTo(day.from, DAY_MS);
        if (day.from.getTime() !== start.getTime()) {
          parts.push(cut);
          continue;
        }
        // Cut only by `to`, most often now: with no report of the day after `to`, the day's
        // counters are the answer, and today's active rows (still changing, so never index-only)
        // need not be counted. One index probe decides, in the same snapshot.
        const later = `EXISTS (SELECT 1 FROM analytics.sync_reports
            WHERE ${this.raw(p, org, product, [{ from: day.to, to: new Date(start.getTime() + DAY_MS) }])})`;
        parts.push(`SELECT * FROM ${cut} cut WHERE ${later}`);
        parts.push(
          `SELECT day::timestamp AT TIME ZONE 'UTC' AS bucket, syncs, licenses, fingerprints, peak_seats_in_use
             FROM analytics.usage_daily
            WHERE org_id = ${org} AND product_id = ${rollupProduct()} AND day = ${p.add(utcDate(start))}::date
              AND NOT ${later}`,
        );
      }
    }
    return this.paged(p, parts.join(' UNION ALL '), 'bucket ASC', page);
  }

  features(scope: ReportScope, page: PageRequest): Promise<Page<{ feature: string; count: number }>> {
    return this.counted(
      scope,
      page,
      'feature',
      'feature_usage_hourly',
      'f.feature FROM analytics.sync_reports r CROSS JOIN LATERAL unnest(r.features_used) AS f(feature)',
      'count DESC, feature COLLATE "C" ASC',
    );
  }

  versions(
    scope: ReportScope,
    page: PageRequest,
  ): Promise<Page<{ app_version: string | null; count: number }>> {
    return this.counted(
      scope,
      page,
      'app_version',
      'version_usage_hourly',
      "coalesce(r.app_version, '') FROM analytics.sync_reports r",
      'count DESC, app_version COLLATE "C" ASC NULLS LAST',
      "nullif(app_version, '')",
    );
  }

  /**
   * Distinct licenses and machines that synced at or after `from` (a whole UTC hour): the rows of
   * the last-seen tables whose hour is in the window, counted through their (organization, hour)
   * indexes. A license has one product, so the organization's licenses are its rows of every
   * product; machines have their organization-wide rows (ALL_PRODUCTS).
   */
  async active(
    orgId: string,
    productId: string | undefined,
    from: Date,
  ): Promise<{ licenses: number; machines: number }> {
    const [row] = await this.dataSource.query<Array<{ licenses: number; machines: number }>>(
      `SELECT (SELECT count(*)::int FROM analytics.license_last_seen
                WHERE org_id = $1 AND last_seen_hour >= $3 AND ($2::uuid IS NULL OR product_id = $2)) AS licenses,
              (SELECT count(*)::int FROM analytics.fingerprint_last_seen
                WHERE org_id = $1 AND product_id = coalesce($2::uuid, $4::uuid) AND last_seen_hour >= $3) AS machines`,
      [orgId, productId ?? null, from, ALL_PRODUCTS],
    );
    return row!;
  }

  /**
   * From the raw reports kept (ANALYTICS_RAW_RETENTION_DAYS): the license's reports within
   * retention, through its (license_id, received_at) index in each day's partition.
   */
  async licenseUsage(
    orgId: string,
    licenseId: string,
    productId: string | undefined,
    page: PageRequest,
  ): Promise<LicenseUsageRow> {
    const { skip, take } = pageWindow(page);
    const [row] = await this.dataSource.query<LicenseUsageRow[]>(
      `WITH mine AS (
         SELECT received_at, hardware_fingerprint, app_version, seats_in_use
           FROM ${this.table} WHERE org_id = $1 AND license_id = $2 AND ($5::uuid IS NULL OR product_id = $5)),
       prints AS (
         SELECT hardware_fingerprint AS fingerprint, max(received_at) AS last_sync_at
           FROM mine WHERE hardware_fingerprint IS NOT NULL GROUP BY 1)
       SELECT s.*,
              (SELECT count(*)::int FROM prints) AS total,
              (SELECT coalesce(json_agg(p), '[]'::json) FROM (
                 SELECT fingerprint, last_sync_at FROM prints
                  ORDER BY last_sync_at DESC, fingerprint COLLATE "C" ASC LIMIT $3 OFFSET $4) p) AS fingerprints,
              (SELECT coalesce(json_agg(d ORDER BY d.day), '[]'::json) FROM (
                 SELECT to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS syncs,
                        count(DISTINCT hardware_fingerprint)::int AS machines
                   FROM mine GROUP BY 1) d) AS daily
         FROM (SELECT count(*)::int AS syncs,
                      max(received_at) AS last_sync_at,
                      max(seats_in_use) AS peak_seats_in_use,
                      coalesce(array_agg(DISTINCT app_version) FILTER (WHERE app_version IS NOT NULL), '{}') AS versions
                 FROM mine) s`,
      [orgId, licenseId, take, skip, productId ?? null],
    );
    return row!;
  }

  /**
   * One UTC day that the range cuts. Syncs and peak: its whole hours' counters, its partial hours
   * raw. Distinct licenses and machines: the day's active rows whose hour mask meets its whole
   * hours, plus the rows that missed them but synced in the hour of a partial span and have a raw
   * report inside it: the few that stopped (or started) syncing right there. The partial spans'
   * raw reports are read once, into `edge`.
   */
  private partialDay(
    p: Params,
    org: string,
    product: string | null,
    rollupProduct: () => string,
    day: Span,
  ): string {
    const { whole, partial } = splitRange(day.from, day.to, HOUR_MS);
    const start = floorTo(day.from, DAY_MS);
    const bucket = p.add(start);
    const date = `${p.add(utcDate(start))}::date`;
    const hours = whole ? `hour >= ${p.add(whole.from)} AND hour < ${p.add(whole.to)}` : 'false';
    const mask = `${p.add(whole ? hourMask(start, whole) : 0)}::int`;
    const edgeHours = partial.reduce(
      (bits, span) =>
        bits | hourMask(start, { from: floorTo(span.from, HOUR_MS), to: ceilTo(span.to, HOUR_MS) }),
      0,
    );
    const missed = `hours & ${mask} = 0 AND hours & ${p.add(edgeHours)}::int <> 0`;
    const raw = partial.length > 0 ? this.raw(p, org, product, partial) : 'false';
    const onProduct = product ? `AND product_id = ${product}` : '';
    const licenses = `FROM analytics.active_licenses_daily WHERE org_id = ${org} ${onProduct} AND day = ${date}`;
    const machines = `FROM analytics.active_fingerprints_daily
      WHERE org_id = ${org} AND product_id = ${rollupProduct()} AND day = ${date}`;
    // Materialized, so that PostgreSQL joins the few rows that missed to the partial spans' reports
    // instead of probing the day's rows once for every license of those reports.
    return `(WITH edge AS MATERIALIZED (
               SELECT product_id, license_id, hardware_fingerprint, seats_in_use FROM analytics.sync_reports WHERE ${raw}),
             missed_licenses AS MATERIALIZED (SELECT product_id, license_id ${licenses} AND ${missed}),
             missed_machines AS MATERIALIZED (SELECT fingerprint ${machines} AND ${missed})
      SELECT ${bucket}::timestamptz AS bucket, h.syncs + e.syncs AS syncs, l.n + le.n AS licenses,
             f.n + fe.n AS fingerprints, greatest(h.peak, e.peak) AS peak_seats_in_use
        FROM (SELECT coalesce(sum(syncs), 0)::int AS syncs, max(peak_seats_in_use) AS peak FROM analytics.usage_hourly
               WHERE org_id = ${org} AND product_id = ${rollupProduct()} AND ${hours}) h,
             (SELECT count(*)::int AS syncs, max(seats_in_use) AS peak FROM edge) e,
             (SELECT count(*)::int AS n ${licenses} AND hours & ${mask} <> 0) l,
             (SELECT count(*)::int AS n FROM missed_licenses
               WHERE (product_id, license_id) IN (SELECT product_id, license_id FROM edge)) le,
             (SELECT count(*)::int AS n ${machines} AND hours & ${mask} <> 0) f,
             (SELECT count(*)::int AS n FROM missed_machines
               WHERE fingerprint IN (SELECT hardware_fingerprint FROM edge)) fe
       WHERE h.syncs + e.syncs > 0)`;
  }

  /** Raw reports of the organization (and product) within the spans. */
  private raw(p: Params, org: string, product: string | null, spans: Span[]): string {
    const within = spans
      .map((span) => `(received_at >= ${p.add(span.from)} AND received_at < ${p.add(span.to)})`)
      .join(' OR ');
    return `org_id = ${org} ${product ? `AND product_id = ${product}` : ''} AND (${within})`;
  }

  /** Reports per key (feature, version) over the range: whole hours from a rollup, partial ones raw. */
  private counted<T>(
    scope: ReportScope,
    page: PageRequest,
    key: string,
    rollup: string,
    rawKeyFrom: string,
    order: string,
    shown = key,
  ): Promise<Page<T>> {
    const p = new Params();
    const org = p.add(scope.orgId);
    const product = scope.productId === undefined ? null : p.add(scope.productId);
    const { whole, partial } = splitRange(scope.from, scope.to, HOUR_MS);
    const parts: string[] = [];
    if (whole) {
      parts.push(
        `SELECT ${key} AS key, syncs FROM analytics.${rollup}
          WHERE org_id = ${org} ${product ? `AND product_id = ${product}` : ''}
            AND hour >= ${p.add(whole.from)} AND hour < ${p.add(whole.to)}`,
      );
    }
    if (partial.length > 0) {
      parts.push(`SELECT ${rawKeyFrom.replace(' FROM', ' AS key, 1 AS syncs FROM')}
                   WHERE ${this.raw(p, org, product, partial)}`);
    }
    return this.paged(
      p,
      `SELECT ${shown.replace(key, 'key')} AS ${key}, sum(syncs)::int AS count FROM (${parts.join(' UNION ALL ')}) x GROUP BY key`,
      order,
      page,
    );
  }

  /**
   * One page of a grouped query and the number of groups. The LEFT JOIN keeps one row even when
   * the page is past the end, so the total still arrives.
   */
  private async paged<T>(p: Params, grouped: string, order: string, page: PageRequest): Promise<Page<T>> {
    const { skip, take } = pageWindow(page);
    const limit = p.add(take);
    const offset = p.add(skip);
    const rows = await this.dataSource.query<Array<T & { total: number; has_row: boolean | null }>>(
      `WITH grouped AS (${grouped})
       SELECT (SELECT count(*)::int FROM grouped) AS total, page.*
         FROM (SELECT 1) one
         LEFT JOIN LATERAL (
           SELECT grouped.*, true AS has_row FROM grouped
            ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}) page ON true`,
      p.values,
    );
    return {
      total: rows[0]?.total ?? 0,
      rows: rows
        .filter((row) => row.has_row)
        .map(({ total: _total, has_row: _hasRow, ...row }) => row as unknown as T),
    };
  }

  private get table(): string {
    return syncReportsTable(this.dataSource);
  }
}
