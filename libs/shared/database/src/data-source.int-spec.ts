import { Client } from 'pg';
import { randomBytes } from 'node:crypto';
import { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { isConnectionLost } from '@licensing/shared/errors';
import { ensureDatabase, migrate, serviceDataSourceOptions } from './data-source';
import { TEST_ADMIN_DATABASE_URL, TEST_DATABASE_URL, testDatabaseUrl } from '@licensing/shared/testing';

const admin = TEST_ADMIN_DATABASE_URL;

describe('ensureDatabase', () => {
  const name = `licensing_test_ensure_${randomBytes(4).toString('hex')}`;

  afterAll(async () => {
    const client = new Client({ connectionString: admin });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.end();
  });

  it('creates a missing database once, even when every service of a fresh stack asks at the same moment', async () => {
    const url = testDatabaseUrl(name);
    await Promise.all(Array.from({ length: 8 }, () => ensureDatabase(url)));
    const client = new Client({ connectionString: url });
    await client.connect();
    expect((await client.query('SELECT current_database() AS db')).rows).toEqual([{ db: name }]);
    await client.end();
    await expect(ensureDatabase(url)).resolves.toBeUndefined();
  });

  it('refuses a database name that is not a plain identifier', async () => {
    await expect(ensureDatabase(testDatabaseUrl('x";drop'))).rejects.toThrow(/Refusing/);
  });
});

/** A migration slower than the query timeout. */
class SlowStep1700000000000 implements MigrationInterface {
  name = 'SlowStep1700000000000';
  async up(runner: QueryRunner): Promise<void> {
    await runner.query('SELECT pg_sleep(0.6)');
  }
  async down(): Promise<void> {}
}

describe('the query timeout (DATABASE_QUERY_TIMEOUT_MS)', () => {
  const schema = `timeout_${randomBytes(4).toString('hex')}`;
  const dataSources: DataSource[] = [];
  /** A pool of two connections of its own, with a 300 ms query timeout. */
  const pool = async () => {
    const dataSource = new DataSource(
      serviceDataSourceOptions({
        url: TEST_DATABASE_URL,
        schema,
        entities: [],
        migrations: [SlowStep1700000000000],
        poolSize: 2,
        connectTimeoutMs: 1_000,
        queryTimeoutMs: 300,
      }),
    );
    dataSources.push(await dataSource.initialize());
    return dataSource;
  };

  beforeAll(() => ensureDatabase(TEST_DATABASE_URL));
  afterAll(async () => {
    const admin = await pool();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await Promise.all(dataSources.map((dataSource) => dataSource.destroy()));
  });

  it('fails a query with no result in time as a lost connection (503 unavailable), soon', async () => {
    const dataSource = await pool();
    const sent = Date.now();
    const error = await dataSource.query('SELECT pg_sleep(3)').catch((failure: unknown) => failure);
    expect(isConnectionLost(error)).toBe(true);
    expect(Date.now() - sent).toBeLessThan(2_000);
  });

  it('leaves no transaction open for the next request when a statement in it times out', async () => {
    const dataSource = await pool();
    const table = `"${schema}".writes`;
    await dataSource.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await dataSource.query(`CREATE TABLE ${table} (name text)`);
    // Its ROLLBACK, queued behind the slow statement, times out too: the transaction stays open.
    const error = await dataSource
      .transaction(async (manager) => {
        await manager.query(`INSERT INTO ${table} VALUES ('abandoned')`);
        await manager.query('SELECT pg_sleep(1)');
      })
      .catch((failure: unknown) => failure);
    expect(isConnectionLost(error)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    // On each connection of the pool, a write answered as done...
    await Promise.all([1, 2].map(() => dataSource.query(`INSERT INTO ${table} VALUES ('acknowledged')`)));
    // ...is committed: another session sees it, and nothing of the abandoned transaction.
    const other = new Client({ connectionString: TEST_DATABASE_URL });
    await other.connect();
    try {
      const { rows } = await other.query(`SELECT name FROM ${table} ORDER BY name`);
      expect(rows).toEqual([{ name: 'acknowledged' }, { name: 'acknowledged' }]);
    } finally {
      await other.end();
    }
  });

  it('does not apply to migrations, which may take longer', async () => {
    const dataSource = await pool();
    await migrate(dataSource, schema);
    const applied = (await dataSource.query(`SELECT name FROM "${schema}".migrations`)) as Array<{
      name: string;
    }>;
    expect(applied.map((row) => row.name)).toEqual(['SlowStep1700000000000']);
  });
});
