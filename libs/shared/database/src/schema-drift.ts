import { DataSource } from 'typeorm';
import { ServiceDatabaseOptions, ensureDatabase, migrate, serviceDataSourceOptions } from './data-source';

/**
 * The SQL TypeORM would run to make the database match the entities. After all migrations have
 * run this must be empty; anything else means an entity changed without a migration.
 */
export async function pendingSchemaChanges(dataSource: DataSource): Promise<string[]> {
  const sql = await dataSource.driver.createSchemaBuilder().log();
  return sql.upQueries.map((query) => query.query);
}

/**
 * A service's schema built from its migrations alone, in the database at `url` (created if
 * missing), then compared with its entities: the pendingSchemaChanges a schema-drift test expects
 * to be empty. Needs no bus and no running service.
 */
export async function schemaDrift(options: ServiceDatabaseOptions): Promise<string[]> {
  await ensureDatabase(options.url);
  const dataSource = new DataSource(serviceDataSourceOptions({ poolSize: 2, ...options }));
  await dataSource.initialize();
  try {
    await migrate(dataSource, options.schema);
    return await pendingSchemaChanges(dataSource);
  } finally {
    await dataSource.destroy();
  }
}
