import { DataSource } from 'typeorm';
import {
  ensureDatabase,
  migrate,
  pendingSchemaChanges,
  serviceDataSourceOptions,
} from '@licensing/shared/database';
import { TEST_DATABASE_URL } from '@licensing/shared/testing';
import { GATEWAY_ENTITIES, GATEWAY_SCHEMA } from './app.module';
import { GATEWAY_MIGRATIONS } from './migrations';

describe('the gateway schema', () => {
  it('leaves no difference between its entities and its migrations', async () => {
    await ensureDatabase(TEST_DATABASE_URL);
    const dataSource = new DataSource(
      serviceDataSourceOptions({
        url: TEST_DATABASE_URL,
        schema: GATEWAY_SCHEMA,
        entities: GATEWAY_ENTITIES,
        migrations: GATEWAY_MIGRATIONS,
        poolSize: 2,
      }),
    );
    await dataSource.initialize();
    try {
      await migrate(dataSource, GATEWAY_SCHEMA);
      expect(await pendingSchemaChanges(dataSource)).toEqual([]);
    } finally {
      await dataSource.destroy();
    }
  });
});
