import { Pool, QueryResultRow } from 'pg';
import { DataSource } from 'typeorm';

/**
 * A fixed read on a hot path (verify, validate): sent by name, so that each pooled connection
 * parses and plans it once, and run on TypeORM's own pool past its query builder and entity
 * hydration, which cost more CPU than the query itself. Rows come back as node-postgres reads them
 * (timestamps as Dates). Everything else goes through TypeORM.
 */
export function preparedStatement<Row extends QueryResultRow>(
  dataSource: DataSource,
  name: string,
  text: string,
): (values: unknown[]) => Promise<Row[]> {
  return async (values) => {
    const pool = (dataSource.driver as unknown as { master: Pool }).master;
    return (await pool.query<Row>({ name, text, values })).rows;
  };
}

/**
 * A prepared statement answering whole entities: every column selected under its property name,
 * the rows given the entity's prototype, as TypeORM would hydrate them (no column of ours has a
 * transformer, so node-postgres's values are the entity's). `where` uses $1, $2… of `values`.
 */
export function preparedEntityQuery<T extends object>(
  dataSource: DataSource,
  entity: new () => T,
  name: string,
  where: string,
): (values: unknown[]) => Promise<T[]> {
  const { tablePath, columns } = dataSource.getMetadata(entity);
  const select = columns.map((column) => `"${column.databaseName}" AS "${column.propertyName}"`).join(', ');
  const query = preparedStatement<Partial<T>>(
    dataSource,
    name,
    `SELECT ${select} FROM ${tablePath} WHERE ${where}`,
  );
  return async (values) => (await query(values)).map((row) => Object.assign(new entity(), row));
}
