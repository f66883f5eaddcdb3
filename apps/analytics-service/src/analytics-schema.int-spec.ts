import { DataSource } from 'typeorm';
import { schemaDrift } from '@licensing/shared/database';
import { TEST_DATABASE_URL } from '@licensing/shared/testing';
import { ANALYTICS_ENTITIES, ANALYTICS_SCHEMA } from './app.module';
import { ANALYTICS_MIGRATIONS } from './migrations';
import { DAILY_PARTITIONED, MONTHLY_PARTITIONED, REPORT_IDS } from './partitions/partitions.service';

describe('the analytics-service schema (analytics)', () => {
  it('leaves no difference between its entities and its migrations', async () => {
    const drift = await schemaDrift({
      url: TEST_DATABASE_URL,
      schema: ANALYTICS_SCHEMA,
      entities: ANALYTICS_ENTITIES,
      migrations: ANALYTICS_MIGRATIONS,
    });
    expect(drift).toEqual([]);
  });

  // The entities cannot state partitioning (TypeORM has no PARTITION BY), so the comparison above
  // is blind to it: this states it instead.
  it('partitions raw reports and active rows by day, rollups by month and report ids by their month', async () => {
    const dataSource = new DataSource({ type: 'postgres', url: TEST_DATABASE_URL });
    await dataSource.initialize();
    try {
      const rows = await dataSource.query<Array<{ table: string; key: string }>>(
        `SELECT c.relname AS table, pg_get_partkeydef(c.oid) AS key
           FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
           JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 ORDER BY 1`,
        [ANALYTICS_SCHEMA],
      );
      expect(Object.fromEntries(rows.map((row) => [row.table, row.key]))).toEqual({
        active_fingerprints_daily: 'RANGE (day)',
        active_licenses_daily: 'RANGE (day)',
        feature_usage_hourly: 'RANGE (hour)',
        sync_report_ids: 'RANGE (claimed_month)',
        sync_reports: 'RANGE (received_at)',
        usage_daily: 'RANGE (day)',
        usage_hourly: 'RANGE (hour)',
        version_usage_hourly: 'RANGE (hour)',
      });
      expect([...DAILY_PARTITIONED, ...MONTHLY_PARTITIONED, REPORT_IDS].sort()).toEqual(
        rows.map((row) => row.table),
      );
      // Nor can they state an index's INCLUDE: the daily active rows' masks ride in the primary key.
      const keys = await dataSource.query<Array<{ name: string; definition: string }>>(
        `SELECT conname AS name, pg_get_indexdef(conindid) AS definition FROM pg_constraint
          WHERE conname IN ('pk_active_licenses_daily', 'pk_active_fingerprints_daily') ORDER BY 1`,
      );
      expect(keys.map((key) => [key.name, /INCLUDE \(hours\)$/.test(key.definition)])).toEqual([
        ['pk_active_fingerprints_daily', true],
        ['pk_active_licenses_daily', true],
      ]);
    } finally {
      await dataSource.destroy();
    }
  });
});
