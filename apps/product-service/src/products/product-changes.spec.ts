import { randomUUID } from 'node:crypto';
import { getMetadataArgsStorage } from 'typeorm';
import { PRODUCT_CODE_PATTERN, UpdateProductDto } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { ProductEntity } from './product.entity';
import { applyProductChanges, isRefusal, newProduct, nextVersion } from './product-changes';

const ORG = randomUUID();
const CREATED = new Date('2030-01-01T00:00:00.000Z');

const product = (): ProductEntity =>
  newProduct(
    ORG,
    {
      name: 'Photo Editor',
      code: 'photo-editor',
      default_features: ['pro'],
      max_concurrent_activations: 3,
      activation_heartbeat_interval: 600,
    },
    randomUUID(),
    CREATED,
  );

describe('product codes', () => {
  it('are lowercase letters, digits and single hyphens', () => {
    for (const code of ['photo-editor', 'v2', 'a-1-b']) expect(PRODUCT_CODE_PATTERN.test(code)).toBe(true);
    for (const code of ['Photo', 'a--b', '-a', 'a-', 'a_b', 'a b', '']) {
      expect(PRODUCT_CODE_PATTERN.test(code)).toBe(false);
    }
  });

  it("are held to the same pattern by the database's check as by the API", () => {
    const check = getMetadataArgsStorage().checks.find(
      ({ target, name }) => target === ProductEntity && name === 'ck_products_code',
    );
    expect(check?.expression).toContain(`code ~ '${PRODUCT_CODE_PATTERN.source}'`);
  });
});

describe('newProduct', () => {
  it('gives what the request leaves out its default', () => {
    const id = randomUUID();
    expect(newProduct(ORG, { name: 'Editor', code: 'editor' }, id, CREATED)).toEqual(
      Object.assign(new ProductEntity(), {
        id,
        orgId: ORG,
        name: 'Editor',
        code: 'editor',
        description: '',
        defaultFeatures: [],
        defaultValidDays: 365,
        keyPairId: null,
        maxConcurrentActivations: null,
        activationHeartbeatInterval: null,
        createdAt: CREATED,
        updatedAt: CREATED,
        deletingSince: null,
      }),
    );
  });

  it('keeps 0 valid days: a perpetual product is not given the default', () => {
    expect(
      newProduct(ORG, { name: 'E', code: 'e', default_valid_days: 0 }, randomUUID(), CREATED),
    ).toMatchObject({ defaultValidDays: 0 });
  });
});

describe('applyProductChanges', () => {
  const later = new Date('2030-02-01T00:00:00.000Z');

  it('changes the fields sent and keeps the others', () => {
    const changed = product();
    applyProductChanges(changed, { description: 'Edits photos', default_valid_days: 30 }, later);
    expect(changed).toEqual({
      ...product(),
      id: changed.id,
      description: 'Edits photos',
      defaultValidDays: 30,
      updatedAt: later,
    });
  });

  it('clears the limits sent as null', () => {
    const changed = product();
    applyProductChanges(
      changed,
      { max_concurrent_activations: null, activation_heartbeat_interval: null },
      later,
    );
    expect(changed).toMatchObject({ maxConcurrentActivations: null, activationHeartbeatInterval: null });
  });

  it('never changes the code, even if a message carries one', () => {
    const changed = product();
    applyProductChanges(changed, { code: 'other' } as UpdateProductDto, later);
    expect(changed.code).toBe('photo-editor');
  });
});

describe('nextVersion', () => {
  it('is now, or a millisecond after the version before if the clock has not moved past it', () => {
    const previous = new Date('2030-01-01T00:00:00.000Z');
    expect(nextVersion(previous, new Date('2030-01-01T00:00:01.000Z'))).toEqual(
      new Date('2030-01-01T00:00:01.000Z'),
    );
    expect(nextVersion(previous, previous)).toEqual(new Date('2030-01-01T00:00:00.001Z'));
    expect(nextVersion(previous, new Date('2029-12-31T23:59:59.000Z'))).toEqual(
      new Date('2030-01-01T00:00:00.001Z'),
    );
  });
});

describe('isRefusal', () => {
  it("is the license service's 4xx answer, not an outage or another error", () => {
    expect(isRefusal(DomainError.conflict('The product has licenses'))).toBe(true);
    expect(isRefusal(new DomainError('unavailable', 'retry later'))).toBe(false);
    expect(isRefusal(new Error('timeout'))).toBe(false);
  });
});
