import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ExclusiveJob } from '@licensing/shared/database';
import { ANALYTICS_CONFIG, AnalyticsServiceConfig } from '../config';

const DAY_MS = 24 * 3600 * 1000;
/** Serializes partition DDL between replicas (CREATE … PARTITION OF IF NOT EXISTS still races). */
const PARTITIONS_LOCK = 'analytics:partitions';

/** Tables partitioned by UTC day, kept ANALYTICS_RAW_RETENTION_DAYS: `<table>_pYYYYMMDD`. */
export const DAILY_PARTITIONED = [
  'sync_reports',
  'active_licenses_daily',
  'active_fingerprints_daily',
] as const;
/** Tables partitioned by UTC month, kept ANALYTICS_ROLLUP_RETENTION_DAYS: `<table>_pYYYYMM`. */
export const MONTHLY_PARTITIONED = [
  'usage_hourly',
  'usage_daily',
  'feature_usage_hourly',
  'version_usage_hourly',
] as const;
/**
 * Report ids, partitioned by the UTC month they were claimed in: a month is kept until a day past
 * its end is older than raw retention, so an id is refused for at least as long as its report is
 * kept.
 */
export const REPORT_IDS = 'sync_report_ids';

/** `2026-11-23` for any instant of that UTC day. */
export const utcDay = (at: Date | string): string => new Date(at).toISOString().slice(0, 10);

/** The first instant of raw retention: today's UTC midnight, `rawDays` days back. */
export const rawRetentionStart = (now: Date, rawDays: number): Date =>
  new Date(Date.parse(utcDay(now)) - rawDays * DAY_MS);

/**
 * Partitions that end on or before their table's retention cutoff: raw and active days older than
 * `rawDays` before today, report-id months that ended before that day, rollup months that ended
 * more than `rollupDays` ago. Pure, for the tests.
 */
export function expiredPartitions(
  partitions: Array<{ parent: string; name: string }>,
  now: Date,
  retention: { rawDays: number; rollupDays: number },
): string[] {
  const rawCutoff = rawRetentionStart(now, retention.rawDays).getTime();
  const rollupCutoff = now.getTime() - retention.rollupDays * DAY_MS;
  return partitions
    .filter(({ parent, name }) => {
      const suffix = name.slice(parent.length + 2);
      if ((DAILY_PARTITIONED as readonly string[]).includes(parent) && /^\d{8}$/.test(suffix)) {
        const day = Date.UTC(+suffix.slice(0, 4), +suffix.slice(4, 6) - 1, +suffix.slice(6, 8));
        return day < rawCutoff;
      }
      if (parent === REPORT_IDS && /^\d{6}$/.test(suffix)) {
        // A day past the month's end: a report received just after midnight by a clock a little
        // ahead of PostgreSQL's is in the next day's raw partition, its id in this month.
        return Date.UTC(+suffix.slice(0, 4), +suffix.slice(4, 6), 2) <= rawCutoff;
      }
      if ((MONTHLY_PARTITIONED as readonly string[]).includes(parent) && /^\d{6}$/.test(suffix)) {
        const end = Date.UTC(+suffix.slice(0, 4), +suffix.slice(4, 6), 1);
        return end <= rollupCutoff;
      }
      return false;
    })
    .map(({ name }) => name);
}

/**
 * Creates partitions ahead of the reports (for today and the next days at boot and every hour, and
 * for any day a batch needs, as late reports can), and drops whole partitions once past retention:
 * expired data never goes row by row.
 */
@Injectable()
export class PartitionsService {
  private readonly logger = new Logger(PartitionsService.name);
  /** Days whose partitions this process has made sure of. */
  private readonly ready = new Set<string>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(ANALYTICS_CONFIG) private readonly config: AnalyticsServiceConfig,
  ) {}

  /** Every partition the given UTC days need exists once this resolves. */
  async ensure(days: Iterable<string>): Promise<void> {
    const missing = [...new Set(days)].filter((day) => !this.ready.has(day)).sort();
    if (missing.length === 0) return;
    await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [PARTITIONS_LOCK]);
      for (const day of missing) await manager.query('SELECT analytics.create_partitions($1::date)', [day]);
    });
    for (const day of missing) this.ready.add(day);
  }

  /** Today and ANALYTICS_PARTITIONS_AHEAD_DAYS after it. */
  ensureAhead(now = new Date()): Promise<void> {
    const days = [];
    for (let i = 0; i <= this.config.ANALYTICS_PARTITIONS_AHEAD_DAYS; i += 1) {
      days.push(utcDay(new Date(now.getTime() + i * DAY_MS)));
    }
    return this.ensure(days);
  }

  /**
   * Drops every expired partition, and the last-seen rows older than raw retention (one row per
   * license or machine, not per report: what leaves is the fleet's churn); answers the partitions'
   * names.
   */
  async dropExpired(manager: EntityManager, now = new Date()): Promise<string[]> {
    await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [PARTITIONS_LOCK]);
    const partitions = await manager.query<Array<{ parent: string; name: string }>>(
      `SELECT p.relname AS parent, c.relname AS name
         FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid
         JOIN pg_class p ON p.oid = i.inhparent
         JOIN pg_namespace n ON n.oid = p.relnamespace
        WHERE n.nspname = 'analytics' AND p.relname = ANY($1)`,
      [[...DAILY_PARTITIONED, ...MONTHLY_PARTITIONED, REPORT_IDS]],
    );
    const expired = expiredPartitions(partitions, now, {
      rawDays: this.config.ANALYTICS_RAW_RETENTION_DAYS,
      rollupDays: this.config.ANALYTICS_ROLLUP_RETENTION_DAYS,
    });
    for (const name of expired) await manager.query(`DROP TABLE IF EXISTS analytics."${name}"`);
    // Last-seen rows older than every kept day, as the active rows they stand for are dropped.
    const start = rawRetentionStart(now, this.config.ANALYTICS_RAW_RETENTION_DAYS);
    for (const table of ['license_last_seen', 'fingerprint_last_seen']) {
      await manager.query(`DELETE FROM analytics.${table} WHERE last_seen_hour < $1`, [start]);
    }
    // Metered uses are answered over raw retention too. An event older than that cannot come back:
    // the events stream keeps a week.
    await manager.query(`DELETE FROM analytics.metered_uses WHERE occurred_at < $1`, [start]);
    if (expired.length > 0)
      this.logger.log({ msg: 'dropped expired analytics partitions', partitions: expired });
    for (const name of expired) {
      const day = /_p(\d{4})(\d{2})(\d{2})$/.exec(name);
      if (day) this.ready.delete(`${day[1]}-${day[2]}-${day[3]}`);
    }
    return expired;
  }

  /**
   * VACUUM (ANALYZE) of each ended day's active-row partitions not vacuumed since the day ended,
   * whether or not autovacuum runs: the versions the day's hour-mask updates left are reclaimed,
   * and the visibility map lets a range that cuts the day count its rows from the primary key's
   * index alone (it includes the mask). Answers the partitions vacuumed.
   */
  async sealEndedDays(): Promise<string[]> {
    const due = await this.dataSource.query<Array<{ name: string }>>(
      `SELECT c.relname AS name
         FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid
        WHERE n.nspname = 'analytics' AND c.relkind = 'r'
          AND c.relname ~ '^active_(licenses|fingerprints)_daily_p[0-9]{8}$'
          AND to_date(right(c.relname, 8), 'YYYYMMDD') < (now() AT TIME ZONE 'UTC')::date
          AND coalesce(greatest(s.last_vacuum, s.last_autovacuum), '-infinity')
              < (to_date(right(c.relname, 8), 'YYYYMMDD') + 1)::timestamp AT TIME ZONE 'UTC'
        ORDER BY 1`,
    );
    for (const { name } of due) await this.dataSource.query(`VACUUM (ANALYZE) analytics."${name}"`);
    if (due.length > 0)
      this.logger.log({ msg: 'vacuumed ended days of active rows', partitions: due.length });
    return due.map(({ name }) => name);
  }
}

/**
 * Hourly, on one replica at a time: partitions ahead, expired ones dropped; then the active rows of
 * days that have ended are vacuumed once.
 */
@Injectable()
export class PartitionMaintenanceJob extends ExclusiveJob {
  protected readonly name = 'analytics-partitions';
  protected readonly intervalMs = 3600_000;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly partitions: PartitionsService,
  ) {
    super(dataSource);
  }

  /** Vacuuming cannot run in the pass's transaction; a replica that lost the race finds it done. */
  override async run(): Promise<number> {
    const handled = await super.run();
    await this.partitions.sealEndedDays();
    return handled;
  }

  protected async pass(manager: EntityManager, now: Date): Promise<number> {
    await this.partitions.ensureAhead(now);
    const dropped = await this.partitions.dropExpired(manager, now);
    // Never a full batch: the next pass waits for the interval.
    return dropped.length > 0 ? 1 : 0;
  }

  /**
   * At boot, before the consumer starts: partitions for today and the next days, expired ones
   * dropped. Not the vacuuming, which the first hourly pass does: it would hold the consumer back.
   */
  async prepare(): Promise<void> {
    await super.run();
  }
}
