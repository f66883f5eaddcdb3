import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Messages } from '@licensing/contracts';
import { pendingSchemaChanges } from '@licensing/shared/database';
import {
  BusTestClient,
  deleteNamespaceStreams,
  ScriptedPeer,
  testEnv,
  uniqueNamespace,
} from '@licensing/shared/testing';
import { startProductService } from './app';
import { loadProductServiceConfig } from './config';

/**
 * The product service alone, on the real PostgreSQL and NATS, with the license service's catalog
 * answers scripted: what the product service does when its neighbour agrees or refuses.
 */
describe('product service', () => {
  const namespace = uniqueNamespace();
  let app: INestApplication;
  let bus: BusTestClient;
  let peer: ScriptedPeer;
  const catalog = new Map<string, unknown>();
  let refuseRetire = false;

  beforeAll(async () => {
    peer = (await ScriptedPeer.connect(namespace))
      .on(Messages.catalog.upsert, (product: { id: string; key_pair_id: string | null }) => {
        if (product.key_pair_id === '00000000-0000-4000-8000-000000000000') {
          return { err: { code: 'not_found', status: 404, message: 'Key pair does not exist' } };
        }
        catalog.set(product.id, product);
        return { response: { ok: true } };
      })
      .on(Messages.catalog.retire, () =>
        refuseRetire
          ? { err: { code: 'conflict', status: 409, message: 'Product has licenses and cannot be deleted' } }
          : { response: { ok: true } },
      );
    app = await startProductService(loadProductServiceConfig(testEnv(namespace)));
    bus = await BusTestClient.connect(namespace);
  });

  afterAll(async () => {
    await bus.close();
    await app.close();
    await deleteNamespaceStreams(namespace);
    await peer.close();
  });

  it('leaves no difference between its entities and its migrations', async () => {
    expect(await pendingSchemaChanges(app.get(DataSource))).toEqual([]);
  });

  it('mirrors a created product into the license catalog', async () => {
    const org = bus.as(randomUUID());
    const product = await org.send(Messages.product.create, { name: 'Editor', code: 'editor' });
    expect(catalog.get(product.id)).toMatchObject({
      id: product.id,
      code: 'editor',
      default_valid_days: 365,
    });
  });

  it('rolls the product back when the catalog refuses it', async () => {
    const org = bus.as(randomUUID());
    await expect(
      org.send(Messages.product.create, {
        name: 'Editor',
        code: 'editor',
        key_pair_id: '00000000-0000-4000-8000-000000000000',
      }),
    ).rejects.toMatchObject({ code: 'not_found', status: 404 });
    expect(await org.send(Messages.product.list, {})).toEqual({ products: [], total: 0 });
  });

  it('lets exactly one of many concurrent creates with the same code succeed', async () => {
    const org = bus.as(randomUUID());
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        org.send(Messages.product.create, { name: 'Same', code: 'same-code' }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const failure of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
      expect(failure.reason).toMatchObject({ code: 'conflict', status: 409 });
    }
  });

  it('keeps the product when the license service refuses to retire it', async () => {
    const org = bus.as(randomUUID());
    const product = await org.send(Messages.product.create, { name: 'Kept', code: 'kept' });
    refuseRetire = true;
    try {
      await expect(org.send(Messages.product.delete, { id: product.id })).rejects.toMatchObject({
        code: 'conflict',
      });
    } finally {
      refuseRetire = false;
    }
    expect(await org.send(Messages.product.get, { id: product.id })).toMatchObject({ id: product.id });
    await org.send(Messages.product.delete, { id: product.id });
    await expect(org.send(Messages.product.get, { id: product.id })).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('validates bus payloads with the same rules as HTTP', async () => {
    const org = bus.as(randomUUID());
    await expect(
      org.send(Messages.product.create, { name: 'X', code: 'Not Valid', extra: 1 }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      status: 400,
      errors: expect.arrayContaining([
        expect.objectContaining({ field: 'code' }),
        expect.objectContaining({ field: 'extra' }),
      ]),
    });
  });

  it("never shows one organization's products to another", async () => {
    const owner = bus.as(randomUUID());
    const product = await owner.send(Messages.product.create, { name: 'Mine', code: 'mine' });
    const stranger = bus.as(randomUUID());
    await expect(stranger.send(Messages.product.get, { id: product.id })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(
      stranger.send(Messages.product.update, { id: product.id, changes: { name: 'x' } }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    expect((await stranger.send(Messages.product.list, {})).total).toBe(0);
  });
});
