import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { toDomainError } from '@licensing/shared/errors';
import { waitFor } from '@licensing/shared/testing';

/**
 * What TypeORM and node-postgres actually throw when PostgreSQL cuts a connection under a
 * transaction (a restart, a failover, `pg_terminate_backend`): each is a `503 unavailable` for the
 * caller, never an unexpected `500`.
 */
describe('a database connection cut under a transaction', () => {
  const applicationName = `conn_lost_${randomBytes(4).toString('hex')}`;
  const dataSource = new DataSource({
    type: 'postgres',
    url: 'postgres://postgres@127.0.0.1:5432/postgres',
    logging: false,
    extra: { max: 2, application_name: applicationName },
  });

  /** Terminates this test's backends (by application name), and only those. */
  async function terminate(): Promise<void> {
    const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await admin.connect();
    try {
      await waitFor(
        async () =>
          ((
            await admin.query(
              'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
              [applicationName],
            )
          ).rowCount ?? 0) > 0,
        { what: 'the backend to terminate' },
      );
    } finally {
      await admin.end();
    }
  }

  beforeAll(() => dataSource.initialize());
  afterAll(() => dataSource.destroy());

  it('under a running statement: 57P01 "terminating connection due to administrator command"', async () => {
    const failed = dataSource
      .transaction((manager) => manager.query('SELECT pg_sleep(10)'))
      .catch((error: unknown) => error);
    await terminate();
    const error = await failed;
    expect((error as { driverError?: { code?: string } }).driverError?.code).toBe('57P01');
    expect(toDomainError(error)?.toJSON()).toMatchObject({ code: 'unavailable', status: 503 });
  });

  it.each([
    ['the next statement', 'QueryRunnerProviderAlreadyReleasedError', true],
    ['the commit', 'QueryRunnerAlreadyReleasedError', false],
  ])('between statements: the query runner is released, and %s fails (%s)', async (_, name, again) => {
    const error = await dataSource
      .transaction(async (manager) => {
        await manager.query('SELECT 1');
        await terminate();
        await waitFor(() => manager.queryRunner!.isReleased, { what: 'the query runner to be released' });
        if (again) await manager.query('SELECT 2');
      })
      .catch((caught: unknown) => caught);
    expect((error as Error).name).toBe(name);
    expect(toDomainError(error)?.toJSON()).toMatchObject({ code: 'unavailable', status: 503 });
  });

  it('and the pool serves the next transaction on a new connection', async () => {
    await expect(dataSource.transaction((manager) => manager.query('SELECT 1 AS one'))).resolves.toEqual([
      { one: 1 },
    ]);
  });
});
