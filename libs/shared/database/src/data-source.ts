import { Client } from 'pg';
import { DataSource, DataSourceOptions, EntitySchema, MixedList } from 'typeorm';

export interface ServiceDatabaseOptions {
  url: string;
  /** The PostgreSQL schema this service owns; its tables and its migrations table live there. */
  schema: string;
  entities: MixedList<Function | string | EntitySchema>;
  migrations: MixedList<Function | string>;
  poolSize?: number;
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
    extra: { max: options.poolSize ?? 10, application_name: options.schema },
  };
}

/**
 * Applies the service's pending migrations. Replicas booting together take a PostgreSQL advisory
 * lock per schema, so exactly one runs them and the others wait and find nothing to do.
 */
export async function migrate(dataSource: DataSource, schema: string): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [`migrations:${schema}`]);
    await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await runner
      .query('SELECT pg_advisory_unlock(hashtext($1))', [`migrations:${schema}`])
      .catch(() => undefined);
    await runner.release();
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
