import { schemaDrift } from '@licensing/shared/database';
import { TEST_DATABASE_URL } from '@licensing/shared/testing';
import { ANALYTICS_ENTITIES, ANALYTICS_SCHEMA } from './app.module';
import { ANALYTICS_MIGRATIONS } from './migrations';

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
});
