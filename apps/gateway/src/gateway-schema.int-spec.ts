import { schemaDrift } from '@licensing/shared/database';
import { TEST_DATABASE_URL } from '@licensing/shared/testing';
import { GATEWAY_ENTITIES, GATEWAY_SCHEMA } from './edge/app.module';
import { GATEWAY_MIGRATIONS } from './migrations';

describe('the gateway schema (identity)', () => {
  it('leaves no difference between its entities and its migrations', async () => {
    const drift = await schemaDrift({
      url: TEST_DATABASE_URL,
      schema: GATEWAY_SCHEMA,
      entities: GATEWAY_ENTITIES,
      migrations: GATEWAY_MIGRATIONS,
    });
    expect(drift).toEqual([]);
  });
});
