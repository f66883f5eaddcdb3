import { randomUUID } from 'node:crypto';
import { newProduct } from './product-changes';
import { toCatalogProduct, toProductView } from './product.mapper';

describe('the product mappers', () => {
  const product = newProduct(
    randomUUID(),
    { name: 'Photo Editor', code: 'photo-editor', description: 'Edits photos', key_pair_id: randomUUID() },
    randomUUID(),
    new Date('2030-01-01T00:00:00.000Z'),
  );

  it('answer the API with snake_case fields and ISO dates, never the organization or a deletion mark', () => {
    const view = toProductView(product);
    expect(view).toMatchObject({
      id: product.id,
      code: 'photo-editor',
      description: 'Edits photos',
      key_pair_id: product.keyPairId,
      created_at: '2030-01-01T00:00:00.000Z',
      updated_at: '2030-01-01T00:00:00.000Z',
    });
    expect(Object.keys(view).filter((key) => /org|deleting/.test(key))).toEqual([]);
  });

  it("tell the license service's catalog what a license is made from, and its version", () => {
    expect(toCatalogProduct(product)).toEqual({
      id: product.id,
      code: 'photo-editor',
      name: 'Photo Editor',
      key_pair_id: product.keyPairId,
      default_features: [],
      default_valid_days: 365,
      max_concurrent_activations: null,
      activation_heartbeat_interval: null,
      updated_at: '2030-01-01T00:00:00.000Z',
    });
  });
});
