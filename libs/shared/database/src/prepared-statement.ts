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
