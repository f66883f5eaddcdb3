import { Inject, Injectable } from '@nestjs/common';
import {
  ActiveQueryDto,
  ActiveView,
  ActiveWindow,
  AnalyticsRangeQueryDto,
  FeaturesView,
  LicenseUsageRequest,
  LicenseUsageView,
  Messages,
  UsageQueryDto,
  UsageView,
  VersionsView,
  pageOf,
} from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { BusClient } from '@licensing/shared/messaging';
import { ANALYTICS_CONFIG, AnalyticsServiceConfig } from '../config';
import { rawRetentionStart } from '../partitions/partitions.service';
import { MeteredUsesRepository } from '../usage/metered-uses.repository';
import { AnalyticsRepository, ReportScope } from './analytics.repository';

const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The longest range a query may span, in days. Hourly buckets stop at a month (744 buckets, a
 * few pages); everything else at a year and a day, so that a leap year's report fits.
 */
const MAX_RANGE_DAYS = { hour: 31, day: 366, totals: 366 } as const;

/** `from` inclusive, `to` exclusive: `to` must come after `from`, at most `maxDays` later. */
export function rangeOf(query: { from: string; to: string }, maxDays: number): { from: Date; to: Date } {
  const from = new Date(query.from);
  const to = new Date(query.to);
  if (to.getTime() <= from.getTime()) {
    throw DomainError.validation([{ field: 'to', message: 'to must be after from' }]);
  }
  if (to.getTime() - from.getTime() > maxDays * DAY_MS) {
    throw DomainError.validation([
      { field: 'to', message: `to must be at most ${maxDays} days after from for this query` },
    ]);
  }
  return { from, to };
}

/** Where an active window starts: whole UTC hours for 24h, whole UTC days for 7d and 30d. */
function activeWindowStart(window: ActiveWindow, now: Date): Date {
  switch (window) {
    case '24h':
      return new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - 23 * HOUR_MS);
    case '7d':
      return new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - 6 * DAY_MS);
    case '30d':
      return new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - 29 * DAY_MS);
  }
}

/** Versions in the order a person reads them: 2.10.0 after 2.9.1. */
const versionOrder = new Intl.Collator('en', { numeric: true });

/** Usage of an organization's licenses, from the reports their applications sent with sync. */
@Injectable()
export class AnalyticsService {
  constructor(
    private readonly analytics: AnalyticsRepository,
    private readonly meteredUses: MeteredUsesRepository,
    private readonly bus: BusClient,
    @Inject(ANALYTICS_CONFIG) private readonly config: AnalyticsServiceConfig,
  ) {}

  async usage(orgId: string, query: UsageQueryDto): Promise<UsageView> {
    const interval = query.interval ?? 'day';
    const scope = this.scope(orgId, query, MAX_RANGE_DAYS[interval]);
    const { rows, total } = await this.analytics.usage(scope, interval, pageOf(query));
    return {
      interval,
      buckets: rows.map((row) => ({ ...row, bucket: row.bucket.toISOString() })),
      total,
    };
  }

  async features(orgId: string, query: AnalyticsRangeQueryDto): Promise<FeaturesView> {
    const { rows, total } = await this.analytics.features(
      this.scope(orgId, query, MAX_RANGE_DAYS.totals),
      pageOf(query),
    );
    return { features: rows, total };
  }

  async versions(orgId: string, query: AnalyticsRangeQueryDto): Promise<VersionsView> {
    const { rows, total } = await this.analytics.versions(
      this.scope(orgId, query, MAX_RANGE_DAYS.totals),
      pageOf(query),
    );
    return { versions: rows, total };
  }

  /**
   * A license with reports is known to exist in the organization (the revocation service resolved
   * its serial there). Without reports, only the license service can tell an unused license from
   * one that does not exist or belongs to someone else, and it answers 404 for both. Metered
   * uses are counted over the same retention as the reports.
   */
  async licenseUsage(
    orgId: string,
    { id, product_id, ...page }: LicenseUsageRequest,
  ): Promise<LicenseUsageView> {
    const since = rawRetentionStart(new Date(), this.config.ANALYTICS_RAW_RETENTION_DAYS);
    const [usage, metered] = await Promise.all([
      this.analytics.licenseUsage(orgId, id, product_id, pageOf(page)),
      this.meteredUses.ofLicense(orgId, id, product_id, since),
    ]);
    if (usage.syncs === 0 && metered.increments === 0) await this.bus.send(Messages.license.get, { id });
    return {
      license_id: id,
      last_sync_at: usage.last_sync_at?.toISOString() ?? null,
      syncs: usage.syncs,
      peak_seats_in_use: usage.peak_seats_in_use,
      versions: [...usage.versions].sort(versionOrder.compare),
      fingerprints: usage.fingerprints.map((f) => ({
        fingerprint: f.fingerprint,
        last_sync_at: new Date(f.last_sync_at).toISOString(),
      })),
      total: usage.total,
      daily: usage.daily,
      increments: metered.increments,
      uses_counted: Number(metered.uses_counted),
      last_increment_at: metered.last_increment_at?.toISOString() ?? null,
    };
  }

  /** Distinct licenses and machines of the window, which starts on a UTC hour (24h) or day boundary. */
  async active(orgId: string, query: ActiveQueryDto, now = new Date()): Promise<ActiveView> {
    const window = query.window ?? '24h';
    const from = activeWindowStart(window, now);
    const counts = await this.analytics.active(orgId, query.product_id, from);
    return { window, from: from.toISOString(), to: now.toISOString(), ...counts };
  }

  private scope(orgId: string, query: AnalyticsRangeQueryDto, maxDays: number): ReportScope {
    return { orgId, productId: query.product_id, ...rangeOf(query, maxDays) };
  }
}
