import { DataSource } from 'typeorm';

/**
 * The SQL TypeORM would run to make the database match the entities. After all migrations have
 * run this must be empty; anything else means an entity changed without a migration.
 */
export async function pendingSchemaChanges(dataSource: DataSource): Promise<string[]> {
  const sql = await dataSource.driver.createSchemaBuilder().log();
  return sql.upQueries.map((query) => query.query);
}
