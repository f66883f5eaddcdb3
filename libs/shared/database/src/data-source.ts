import { Client, ClientConfig } from 'pg';
import { DataSource, DataSourceOptions, EntitySchema, MixedList } from 'typeorm';
import type { PostgresConnectionOptions } from 'typeorm/driver/postgres/PostgresConnectionOptions';

export interface ServiceDatabaseOptions {
  url: string;
  /** The PostgreSQL schema this service owns; its tables and its migrations table live there. */
  schema: string;
  entities: MixedList<Function | string | EntitySchema>;
  migrations: MixedList<Function | string>;
  poolSize?: number;
  /** How long a query waits for a connection of the pool (DATABASE_CONNECT_TIMEOUT_MS); no limit if unset. */
  connectTimeoutMs?: number;
  /** How long a query waits for its result (DATABASE_QUERY_TIMEOUT_MS); no limit if unset. */
  queryTimeoutMs?: number;
}

/**
 * node-postgres's client, closing its connection when a query has no answer within `query_timeout`.
 * node-postgres only stops waiting: the session would go back to the pool as it is, maybe in a
 * transaction whose ROLLBACK never went out (queued behind the query, it timed out too). The next
 * request on it would write inside that transaction and lose its writes when it ends. A closed
 * client leaves the pool, and PostgreSQL rolls its transaction back. (TypeORM sends every query
 * with a promise, the only form this watches.)
 */
export class SessionSafeClient extends Client {
  constructor(config?: string | ClientConfig) {
    super(config);
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    this.query = ((...args: unknown[]) => {
      const result = query(...args);
      if (result instanceof Promise) result.catch((error: unknown) => this.closeOnTimeout(error));
      return result;
    }) as Client['query'];
  }

  private closeOnTimeout(error: unknown): void {
    // With a query still running, end() closes the socket at once.
    if (error instanceof Error && error.message === 'Query read timeout') void this.end();
  }
}

/** TypeORM options shared by every service: migrations only, never `synchronize`. */
export function serviceDataSourceOptions(options: ServiceDatabaseOptions): DataSourceOptions {
  return {
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    // Failures surface as errors where they are handled (and are logged there when unexpected).
    logging: false,
    extra: {
      max: options.poolSize ?? 10,
      application_name: options.schema,
      // A PostgreSQL that stops answering (cut off by the network) sends no error: without these a
      // query waits for TCP to give up, minutes. node-postgres fails it with "timeout exceeded when
      // trying to connect" or "Query read timeout", which are answered `unavailable`.
      ...(options.connectTimeoutMs ? { connectionTimeoutMillis: options.connectTimeoutMs } : {}),
      ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs, Client: SessionSafeClient } : {}),
    },
  };
}

/**
 * Applies the service's pending migrations. Replicas booting together take a PostgreSQL advisory
 * lock per schema, so exactly one runs them and the others wait and find nothing to do. They run on
 * a connection of their own without the query timeout: a migration, or the wait for the lock while
 * another replica migrates, may take longer than any request should.
 */
export async function migrate(dataSource: DataSource, schema: string): Promise<void> {
  const options = dataSource.options as PostgresConnectionOptions;
  // Two connections: the one holding the lock, and the one TypeORM runs the migrations on.
  const extra = { ...(options.extra as object), query_timeout: undefined, max: 2 };
  const migrating = new DataSource({ ...options, extra });
  await migrating.initialize();
  const runner = migrating.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [`migrations:${schema}`]);
    await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await migrating.runMigrations({ transaction: 'each' });
  } finally {
    await runner
      .query('SELECT pg_advisory_unlock(hashtext($1))', [`migrations:${schema}`])
      .catch(() => undefined);
    await runner.release();
    await migrating.destroy();
  }
}

/**
 * Creates the database named in the URL when it is missing (development and tests only), so that
 * `npm start` and `npm test` work against a bare PostgreSQL.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`Refusing to create database with name "${name}"`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE "${name}"`).catch((error: { code?: string }) => {
        // Created meanwhile by another process: every service of `npm start` boots at once on a
        // fresh machine. PostgreSQL reports that race as duplicate_database, or as a unique
        // violation on pg_database when both CREATEs get as far as the catalog.
        if (error.code !== '42P04' && error.code !== '23505') throw error;
      });
    }
  } finally {
    await client.end();
  }
}
