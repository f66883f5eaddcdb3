import { schemaDrift } from '@licensing/shared/database';
import { TEST_DATABASE_URL } from '@licensing/shared/testing';
import { LICENSE_ENTITIES, LICENSE_SCHEMA } from './app.module';
import { LICENSE_MIGRATIONS } from './migrations';

describe('the license-service schema (license)', () => {
  it('leaves no difference between its entities and its migrations', async () => {
    const drift = await schemaDrift({
      url: TEST_DATABASE_URL,
      schema: LICENSE_SCHEMA,
      entities: LICENSE_ENTITIES,
      migrations: LICENSE_MIGRATIONS,
    });
    expect(drift).toEqual([]);
  });
});
