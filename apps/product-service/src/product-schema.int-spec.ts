import { schemaDrift } from '@licensing/shared/database';
import { TEST_DATABASE_URL } from '@licensing/shared/testing';
import { PRODUCT_ENTITIES, PRODUCT_SCHEMA } from './app.module';
import { PRODUCT_MIGRATIONS } from './migrations';

describe('the product-service schema (product)', () => {
  it('leaves no difference between its entities and its migrations', async () => {
    const drift = await schemaDrift({
      url: TEST_DATABASE_URL,
      schema: PRODUCT_SCHEMA,
      entities: PRODUCT_ENTITIES,
      migrations: PRODUCT_MIGRATIONS,
    });
    expect(drift).toEqual([]);
  });
});
