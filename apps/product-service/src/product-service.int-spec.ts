import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Messages } from '@licensing/contracts';
import { pendingSchemaChanges } from '@licensing/shared/database';
import {
  BusTestClient,
  deleteNamespaceStreams,
  EventRecorder,
  ScriptedPeer,
  testEnv,
  uniqueNamespace,
} from '@licensing/shared/testing';
import { startProductService } from './app';
import { ProductDeletions } from './products/product-deletions';
import { loadProductServiceConfig } from './config';

const MISSING_KEY_PAIR = '00000000-0000-4000-8000-000000000000';

/**
 * The product service alone, on the real PostgreSQL and NATS, with the license service's answers
 * scripted: what the product service does when its neighbour agrees, refuses or does not answer.
 */
describe('product service', () => {
  const namespace = uniqueNamespace();
  let app: INestApplication;
  let bus: BusTestClient;
  let peer: ScriptedPeer;
  let events: EventRecorder;
  const catalog = new Map<string, unknown>();
  type Answer = 'ok' | 'refuse' | 'unavailable';
  let retireAnswer: Answer = 'ok';
  let upsertAnswer: Answer = 'ok';
  /** Called while the license service "handles" a catalog message: what the product service holds meanwhile. */
  let whileHandling: (() => Promise<void>) | undefined;
  const unavailable = {
    err: { code: 'unavailable', status: 503, message: 'A backing service is unavailable' },
  };

  beforeAll(async () => {
    peer = (await ScriptedPeer.connect(namespace))
      .on(Messages.keyPair.get, ({ id }: { id: string }) =>
        id === MISSING_KEY_PAIR
          ? { err: { code: 'not_found', status: 404, message: `Key pair ${id} not found` } }
          : { response: { id } },
      )
      .on(Messages.catalog.upsert, async (product: { id: string }) => {
        await whileHandling?.();
        if (upsertAnswer === 'unavailable') return unavailable;
        catalog.set(product.id, product);
        return { response: { ok: true } };
      })
      .on(Messages.catalog.retire, async () => {
        await whileHandling?.();
        if (retireAnswer === 'unavailable') return unavailable;
        return retireAnswer === 'refuse'
          ? { err: { code: 'conflict', status: 409, message: 'Product has licenses and cannot be deleted' } }
          : { response: { ok: true } };
      });
    app = await startProductService(loadProductServiceConfig(testEnv(namespace)));
    bus = await BusTestClient.connect(namespace);
    events = await EventRecorder.start(namespace);
  });

  afterEach(() => {
    retireAnswer = 'ok';
    upsertAnswer = 'ok';
    whileHandling = undefined;
  });

  /** Fails unless the product's row can be locked at once: nobody holds it across a bus call. */
  async function expectRowFree(productId: string): Promise<void> {
    await app.get(DataSource).transaction(async (manager) => {
      await manager.query('SELECT 1 FROM product.products WHERE id = $1 FOR UPDATE NOWAIT', [productId]);
    });
  }

  afterAll(async () => {
    await events.stop();
    await bus.close();
    await app.close();
    await deleteNamespaceStreams(namespace);
    await peer.close();
  });

  it('leaves no difference between its entities and its migrations', async () => {
    expect(await pendingSchemaChanges(app.get(DataSource))).toEqual([]);
  });

  it('tells the license catalog about a created product once it is committed', async () => {
    const org = bus.as(randomUUID());
    const product = await org.send(Messages.product.create, { name: 'Editor', code: 'editor' });
    expect(catalog.get(product.id)).toMatchObject({
      id: product.id,
      code: 'editor',
      default_valid_days: 365,
      updated_at: product.updated_at,
    });
  });

  it('writes nothing for a key pair the organization does not have', async () => {
    const org = bus.as(randomUUID());
    await expect(
      org.send(Messages.product.create, { name: 'Editor', code: 'editor', key_pair_id: MISSING_KEY_PAIR }),
    ).rejects.toMatchObject({ code: 'not_found', status: 404 });
    expect(await org.send(Messages.product.list, {})).toEqual({ products: [], total: 0 });
  });

  it('holds no row lock while the license service handles an update or a deletion', async () => {
    const org = bus.as(randomUUID());
    const product = await org.send(Messages.product.create, { name: 'Free', code: 'free' });
    let checks = 0;
    whileHandling = async () => {
      await expectRowFree(product.id);
      checks += 1;
    };
    await org.send(Messages.product.update, { id: product.id, changes: { name: 'Still free' } });
    await org.send(Messages.product.delete, { id: product.id });
    expect(checks).toBe(2);
  });

  it('keeps a committed change when the catalog does not answer; its event carries it', async () => {
    const org = bus.as(randomUUID());
    const product = await org.send(Messages.product.create, { name: 'Before', code: 'kept-change' });
    upsertAnswer = 'unavailable';
    const updated = await org.send(Messages.product.update, { id: product.id, changes: { name: 'After' } });
    expect(updated.name).toBe('After');
    expect(await org.send(Messages.product.get, { id: product.id })).toMatchObject({ name: 'After' });
    const event = await events.waitFor('product.updated', (e) => e.data.id === product.id);
    expect(event.data).toMatchObject({ name: 'After', updated_at: updated.updated_at });
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
    retireAnswer = 'refuse';
    await expect(org.send(Messages.product.delete, { id: product.id })).rejects.toMatchObject({
      code: 'conflict',
    });
    retireAnswer = 'ok';
    expect(await org.send(Messages.product.get, { id: product.id })).toMatchObject({ id: product.id });
    await org.send(Messages.product.delete, { id: product.id });
    await expect(org.send(Messages.product.get, { id: product.id })).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('finishes a deletion the license service did not answer, when asked again or a minute later', async () => {
    const org = bus.as(randomUUID());
    const asked = await org.send(Messages.product.create, { name: 'Asked', code: 'asked-again' });
    const left = await org.send(Messages.product.create, { name: 'Left', code: 'left-alone' });
    const restored = await org.send(Messages.product.create, { name: 'Restored', code: 'restored' });
    retireAnswer = 'unavailable';
    for (const product of [asked, left, restored]) {
      await expect(org.send(Messages.product.delete, { id: product.id })).rejects.toMatchObject({
        status: 503,
      });
      // Hidden while its deletion waits for an answer.
      await expect(org.send(Messages.product.get, { id: product.id })).rejects.toMatchObject({
        code: 'not_found',
      });
    }
    expect((await org.send(Messages.product.list, {})).total).toBe(0);

    retireAnswer = 'ok';
    await org.send(Messages.product.delete, { id: asked.id });
    const deletions = app.get(ProductDeletions);
    expect(await deletions.run()).toBe(0); // Too recent: their requests may still be answered.
    await app
      .get(DataSource)
      .query(`UPDATE product.products SET deleting_since = now() - interval '2 minutes' WHERE id = $1`, [
        restored.id,
      ]);
    retireAnswer = 'refuse';
    expect(await deletions.run()).toBe(1);
    retireAnswer = 'ok';
    expect(await deletions.run(new Date(Date.now() + 61_000))).toBe(1);

    const [{ remaining }] = (await app
      .get(DataSource)
      .query(`SELECT count(*)::int AS remaining FROM product.products WHERE id IN ($1, $2)`, [
        asked.id,
        left.id,
      ])) as [{ remaining: number }];
    expect(remaining).toBe(0);
    expect(await org.send(Messages.product.get, { id: restored.id })).toMatchObject({ name: 'Restored' });
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
