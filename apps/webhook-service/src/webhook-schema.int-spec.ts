import { schemaDrift } from '@licensing/shared/database';
import { TEST_DATABASE_URL } from '@licensing/shared/testing';
import { WEBHOOK_ENTITIES, WEBHOOK_SCHEMA } from './app.module';
import { WEBHOOK_MIGRATIONS } from './migrations';

describe('the webhook-service schema (webhook)', () => {
  it('leaves no difference between its entities and its migrations', async () => {
    const drift = await schemaDrift({
      url: TEST_DATABASE_URL,
      schema: WEBHOOK_SCHEMA,
      entities: WEBHOOK_ENTITIES,
      migrations: WEBHOOK_MIGRATIONS,
    });
    expect(drift).toEqual([]);
  });
});
