import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PageRequest, pageWindow } from '@licensing/shared/database';
import { syncReportsTable } from '../reports/sync-report.entity';

/** Which reports a query looks at: always one organization, `from` inclusive, `to` exclusive. */
export interface ReportScope {
  orgId: string;
  productId?: string;
  from: Date;
  to: Date;
}

export interface Page<T> {
  rows: T[];
  total: number;
}

export interface UsageBucketRow {
  bucket: Date;
  syncs: number;
  licenses: number;
  fingerprints: number;
  peak_seats_in_use: number | null;
}

export interface LicenseUsageRow {
  syncs: number;
  last_sync_at: Date | null;
  peak_seats_in_use: number | null;
  versions: string[];
  fingerprints: Array<{ fingerprint: string; last_sync_at: string }>;
  total: number;
}

/**
 * The read side of sync_reports. Each query is one statement, so a page and its total come from
 * the same snapshot even while reports keep arriving. Every statement filters on org_id first.
 */
@Injectable()
export class AnalyticsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  usage(scope: ReportScope, interval: 'hour' | 'day', page: PageRequest): Promise<Page<UsageBucketRow>> {
    return this.paged(
      scope,
      `SELECT date_trunc('${interval === 'hour' ? 'hour' : 'day'}', received_at, 'UTC') AS bucket,
              count(*)::int AS syncs,
              count(DISTINCT license_id)::int AS licenses,
              count(DISTINCT hardware_fingerprint)::int AS fingerprints,
              max(seats_in_use) AS peak_seats_in_use
         FROM ${this.table} r WHERE %SCOPE% GROUP BY 1`,
      'bucket ASC',
      page,
    );
  }

  features(scope: ReportScope, page: PageRequest): Promise<Page<{ feature: string; count: number }>> {
    return this.paged(
      scope,
      `SELECT f.feature, count(*)::int AS count
         FROM ${this.table} r CROSS JOIN LATERAL unnest(r.features_used) AS f(feature)
        WHERE %SCOPE% GROUP BY f.feature`,
      'count DESC, feature COLLATE "C" ASC',
      page,
    );
  }

  versions(
    scope: ReportScope,
    page: PageRequest,
  ): Promise<Page<{ app_version: string | null; count: number }>> {
    return this.paged(
      scope,
      `SELECT app_version, count(*)::int AS count FROM ${this.table} r WHERE %SCOPE% GROUP BY app_version`,
      'count DESC, app_version COLLATE "C" ASC NULLS LAST',
      page,
    );
  }

  async licenseUsage(orgId: string, licenseId: string, page: PageRequest): Promise<LicenseUsageRow> {
    const { skip, take } = pageWindow(page);
    const [row] = await this.dataSource.query<LicenseUsageRow[]>(
      `WITH mine AS (
         SELECT received_at, hardware_fingerprint, app_version, seats_in_use
           FROM ${this.table} WHERE org_id = $1 AND license_id = $2),
       prints AS (
         SELECT hardware_fingerprint AS fingerprint, max(received_at) AS last_sync_at
           FROM mine WHERE hardware_fingerprint IS NOT NULL GROUP BY 1)
       SELECT s.*,
              (SELECT count(*)::int FROM prints) AS total,
              (SELECT coalesce(json_agg(p), '[]'::json) FROM (
                 SELECT fingerprint, last_sync_at FROM prints
                  ORDER BY last_sync_at DESC, fingerprint COLLATE "C" ASC LIMIT $3 OFFSET $4) p) AS fingerprints
         FROM (SELECT count(*)::int AS syncs,
                      max(received_at) AS last_sync_at,
                      max(seats_in_use) AS peak_seats_in_use,
                      coalesce(array_agg(DISTINCT app_version) FILTER (WHERE app_version IS NOT NULL), '{}') AS versions
                 FROM mine) s`,
      [orgId, licenseId, take, skip],
    );
    return row!;
  }

  /**
   * One page of a grouped query and the number of groups. The LEFT JOIN keeps one row even when
   * the page is past the end, so the total still arrives.
   */
  private async paged<T>(
    scope: ReportScope,
    grouped: string,
    order: string,
    page: PageRequest,
  ): Promise<Page<T>> {
    const params: unknown[] = [scope.orgId, scope.from, scope.to];
    let where = 'r.org_id = $1 AND r.received_at >= $2 AND r.received_at < $3';
    if (scope.productId !== undefined) {
      params.push(scope.productId);
      where += ` AND r.product_id = $${params.length}`;
    }
    const { skip, take } = pageWindow(page);
    params.push(take, skip);
    const rows = await this.dataSource.query<Array<T & { total: number; has_row: boolean | null }>>(
      `WITH grouped AS (${grouped.replace('%SCOPE%', where)})
       SELECT (SELECT count(*)::int FROM grouped) AS total, page.*
         FROM (SELECT 1) one
         LEFT JOIN LATERAL (
           SELECT grouped.*, true AS has_row FROM grouped
            ORDER BY ${order} LIMIT $${params.length - 1} OFFSET $${params.length}) page ON true`,
      params,
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
