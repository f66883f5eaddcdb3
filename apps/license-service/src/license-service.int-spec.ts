import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { Messages, SerialStatus, Streams } from '@licensing/contracts';
import { pendingSchemaChanges } from '@licensing/shared/database';
import { OutboxRelay } from '@licensing/shared/events';
import {
  BusTestClient,
  deleteNamespaceStreams,
  EventRecorder,
  ScriptedPeer,
  TEST_NATS_URL,
  testEnv,
  uniqueNamespace,
  waitFor,
} from '@licensing/shared/testing';
import { namespaced } from '@licensing/shared/messaging';
import { NatsConnection, connect } from 'nats';
import { startLicenseService } from './app';
import { loadLicenseServiceConfig } from './config';
import { LicenseExpirySweeper } from './licenses/license-expiry.sweeper';

/** The license service alone on the real PostgreSQL and NATS, driven over the bus as the gateway does. */
describe('license service', () => {
  const namespace = uniqueNamespace();
  let app: INestApplication;
  let bus: BusTestClient;
  let revocationCache: ScriptedPeer;
  let recorder: EventRecorder;
  const cached: unknown[] = [];

  beforeAll(async () => {
    // The revocation service's side of the write-through, scripted: the test sees what is written.
    revocationCache = (await ScriptedPeer.connect(namespace)).on(Messages.revocation.put, ({ statuses }) => {
      cached.push(...statuses);
      return { response: { ok: true } };
    });
    // A sweep interval longer than the test: the test runs the sweeps itself.
    app = await startLicenseService(
      loadLicenseServiceConfig(testEnv(namespace, { LICENSE_EXPIRY_SWEEP_MS: '3600000' })),
    );
    bus = await BusTestClient.connect(namespace);
    recorder = await EventRecorder.start(namespace);
  });

  afterAll(async () => {
    await recorder.stop();
    await bus.close();
    await app.close();
    await deleteNamespaceStreams(namespace);
    await revocationCache.close();
  });

  async function catalogProduct(orgId: string, keyPairId: string | null) {
    const product = {
      id: randomUUID(),
      code: `p-${randomUUID().slice(0, 8)}`,
      name: 'Product',
      key_pair_id: keyPairId,
      default_features: ['pro'],
      default_valid_days: 30,
      max_concurrent_activations: null,
      activation_heartbeat_interval: null,
      updated_at: new Date().toISOString(),
    };
    await bus.as(orgId).send(Messages.catalog.upsert, product);
    return product;
  }

  it('leaves no difference between its entities and its migrations', async () => {
    expect(await pendingSchemaChanges(app.get(DataSource))).toEqual([]);
  });

  it('stores private keys only encrypted', async () => {
    const orgId = randomUUID();
    const keyPair = await bus.as(orgId).send(Messages.keyPair.create, {});
    const [row] = await app
      .get(DataSource)
      .query('SELECT private_key_ciphertext, master_key_version FROM license.key_pairs WHERE id = $1', [
        keyPair.id,
      ]);
    expect(Buffer.from(row.private_key_ciphertext).toString('latin1')).not.toMatch(/PRIVATE KEY|MC4CAQ/);
    expect(row.master_key_version).toBe('dev');
    expect(JSON.stringify(keyPair)).not.toMatch(/PRIVATE/);
  });

  it("refuses a catalog product naming another organization's key pair", async () => {
    const keyPair = await bus.as(randomUUID()).send(Messages.keyPair.create, {});
    await expect(catalogProduct(randomUUID(), keyPair.id)).rejects.toMatchObject({
      code: 'not_found',
      status: 404,
    });
  });

  it('never lets a license exist for a product retired while creates are in flight', async () => {
    const orgId = randomUUID();
    const org = bus.as(orgId);
    const keyPair = await org.send(Messages.keyPair.create, {});
    for (let round = 0; round < 5; round++) {
      const product = await catalogProduct(orgId, keyPair.id);
      const creates = Array.from({ length: 10 }, () =>
        org.send(Messages.license.create, { product_id: product.id }).then(
          () => 'created',
          (error: { code: string }) => error.code,
        ),
      );
      const retire = org.send(Messages.catalog.retire, { id: product.id }).then(
        () => 'retired',
        (error: { code: string }) => error.code,
      );
      const [outcomes, retired] = await Promise.all([Promise.all(creates), retire]);
      const { total } = await org.send(Messages.license.list, { product_id: product.id });
      expect(outcomes.every((o) => o === 'created' || o === 'not_found')).toBe(true);
      if (retired === 'retired') expect(total).toBe(0);
      else {
        expect(retired).toBe('conflict');
        expect(total).toBe(outcomes.filter((o) => o === 'created').length);
      }
    }
  });

  describe('the catalog, from product events', () => {
    let nats: NatsConnection;
    beforeAll(async () => {
      nats = await connect({ servers: TEST_NATS_URL });
    });
    afterAll(() => nats.drain());

    const version = (offsetMs: number) => new Date(Date.UTC(2026, 0, 1) + offsetMs).toISOString();

    async function publish(orgId: string, type: string, product: ReturnType<typeof productNamed>) {
      const event = {
        id: randomUUID(),
        schema_version: 1,
        type,
        org_id: orgId,
        occurred_at: product.updated_at,
      };
      await nats
        .jetstream()
        .publish(
          namespaced(namespace, `licensing.events.${orgId}.${type}`),
          JSON.stringify({ ...event, data: product }),
        );
    }

    const productNamed = (name: string, updatedAt: string) => ({
      id: randomUUID(),
      code: `p-${randomUUID().slice(0, 8)}`,
      name,
      description: '',
      key_pair_id: null as string | null,
      default_features: [],
      default_valid_days: 30,
      max_concurrent_activations: null,
      activation_heartbeat_interval: null,
      created_at: updatedAt,
      updated_at: updatedAt,
    });

    /** The catalog's view of a product: its name, or the error code when it has none (retired or unknown). */
    async function catalogName(orgId: string, productId: string): Promise<string> {
      return bus
        .as(orgId)
        .send(Messages.license.create, { product_id: productId })
        .then(
          () => 'created',
          (error: { code: string; message: string }) =>
            error.code === 'key_pair_missing' ? 'live' : error.code,
        );
    }

    /** Every event published before this one has been applied: one durable applies them in order. */
    async function settled(orgId: string): Promise<void> {
      const marker = productNamed('marker', version(0));
      await publish(orgId, 'product.created', marker);
      await waitFor(async () => (await catalogName(orgId, marker.id)) === 'live', {
        what: 'the marker product',
      });
    }

    it('applies the newest version of a product and ignores older ones, whatever their order', async () => {
      const orgId = randomUUID();
      const product = productNamed('First', version(1_000));
      await publish(orgId, 'product.created', product);
      await publish(orgId, 'product.updated', { ...product, name: 'Newest', updated_at: version(3_000) });
      await publish(orgId, 'product.updated', { ...product, name: 'Stale', updated_at: version(2_000) });
      await settled(orgId);
      const [row] = await app
        .get(DataSource)
        .query('SELECT name FROM license.catalog_products WHERE id = $1', [product.id]);
      expect(row).toEqual({ name: 'Newest' });
    });

    it('retires a deleted product for good: a late or replayed event does not bring it back', async () => {
      const orgId = randomUUID();
      const product = productNamed('Gone', version(1_000));
      await publish(orgId, 'product.created', product);
      await settled(orgId);
      expect(await catalogName(orgId, product.id)).toBe('live');
      await publish(orgId, 'product.deleted', product);
      await publish(orgId, 'product.updated', { ...product, updated_at: version(5_000) });
      await settled(orgId);
      expect(await catalogName(orgId, product.id)).toBe('not_found');
    });

    it('keeps a product retired before its creation event arrived from being created later', async () => {
      const orgId = randomUUID();
      const product = productNamed('Early', version(1_000));
      await bus.as(orgId).send(Messages.catalog.retire, { id: product.id });
      await publish(orgId, 'product.created', product);
      await settled(orgId);
      expect(await catalogName(orgId, product.id)).toBe('not_found');
    });

    it("sets aside an event naming another organization's key pair, and goes on", async () => {
      const orgId = randomUUID();
      const foreign = await bus.as(randomUUID()).send(Messages.keyPair.create, {});
      const product = { ...productNamed('Foreign key', version(1_000)), key_pair_id: foreign.id };
      await publish(orgId, 'product.created', product);
      await settled(orgId);
      expect(await catalogName(orgId, product.id)).toBe('not_found');
    });
  });

  it('refuses to delete a key pair a product uses, and frees it when the product is retired', async () => {
    const orgId = randomUUID();
    const org = bus.as(orgId);
    const keyPair = await org.send(Messages.keyPair.create, { algorithm: 'ecdsa-p256' });
    const product = await catalogProduct(orgId, keyPair.id);
    await expect(org.send(Messages.keyPair.delete, { id: keyPair.id })).rejects.toMatchObject({
      code: 'conflict',
    });
    await org.send(Messages.catalog.retire, { id: product.id });
    await expect(org.send(Messages.keyPair.delete, { id: keyPair.id })).resolves.toMatchObject({
      message: expect.stringContaining('deleted'),
    });
  });

  it('answers key_pair_missing for a product without a key pair, keeping status and code across the bus', async () => {
    const orgId = randomUUID();
    const product = await catalogProduct(orgId, null);
    await expect(
      bus.as(orgId).send(Messages.license.create, { product_id: product.id }),
    ).rejects.toMatchObject({
      code: 'key_pair_missing',
      status: 422,
      message: `Product ${product.id} has no key pair assigned`,
    });
  });

  it('issues licenses with the catalog defaults, signed with the key named by the product', async () => {
    const orgId = randomUUID();
    const org = bus.as(orgId);
    const keyPair = await org.send(Messages.keyPair.create, {});
    const product = await catalogProduct(orgId, keyPair.id);
    const license = await org.send(Messages.license.create, { product_id: product.id });
    expect(license).toMatchObject({ features: ['pro'], key_pair_id: keyPair.id, product_code: product.code });
    const days = (Date.parse(license.valid_until!) - Date.parse(license.valid_from)) / 86_400_000;
    expect(days).toBe(30);
    const verified = await org.send(Messages.license.verify, {
      license_blob: license.license_blob,
      product_id: product.id,
    });
    expect(verified).toMatchObject({ valid: true, errors: [] });
  });

  it('the expiry sweep stores what reads already report, once, with one license.expired per license', async () => {
    const orgId = randomUUID();
    const org = bus.as(orgId);
    const keyPair = await org.send(Messages.keyPair.create, {});
    const product = await catalogProduct(orgId, keyPair.id);
    const licenses = await Promise.all(
      Array.from({ length: 3 }, () => org.send(Messages.license.create, { product_id: product.id })),
    );
    for (const license of licenses) {
      await org.send(Messages.license.update, {
        id: license.id,
        changes: { valid_until: license.valid_from },
      });
    }
    const storedStatus = async () =>
      (
        await app
          .get(DataSource)
          .query('SELECT status FROM license.licenses WHERE id = ANY($1)', [
            licenses.map((l: { id: string }) => l.id),
          ])
      ).map((row: { status: string }) => row.status);
    expect(await storedStatus()).toEqual(['active', 'active', 'active']);
    expect((await org.send(Messages.license.get, { id: licenses[0].id })).status).toBe('expired');

    // Two replicas' sweeps at once: the advisory lock lets one do the work.
    const sweeper = app.get(LicenseExpirySweeper);
    const handled = await Promise.all([sweeper.run(), sweeper.run()]);
    expect(handled.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3);
    expect(await storedStatus()).toEqual(['expired', 'expired', 'expired']);
    await sweeper.run();
    for (const license of licenses) {
      await recorder.waitFor('license.expired', (e) => e.data.id === license.id);
    }
    const expiredEvents = recorder.of('license.expired', (e) =>
      licenses.some((l: { id: string }) => l.id === e.data.id),
    );
    expect(expiredEvents).toHaveLength(3);
    expect(expiredEvents.every((e) => e.data.status === 'expired' && e.org_id === orgId)).toBe(true);
  });

  it('writes every revocation and status change through to the revocation cache before answering', async () => {
    const orgId = randomUUID();
    const org = bus.as(orgId);
    const keyPair = await org.send(Messages.keyPair.create, {});
    const product = await catalogProduct(orgId, keyPair.id);
    const license = await org.send(Messages.license.create, { product_id: product.id });
    await org.send(Messages.license.update, { id: license.id, changes: { status: 'suspended' } });
    expect(cached).toContainEqual(
      expect.objectContaining({ serial: license.serial, status: 'suspended', org_id: orgId }),
    );
    await org.send(Messages.license.revoke, { id: license.id });
    expect(cached).toContainEqual(expect.objectContaining({ serial: license.serial, status: 'revoked' }));
  });

  describe('a status change answers once its event is in the stream', () => {
    const outboxOf = async (licenseId: string) =>
      Number(
        (
          await app
            .get(DataSource)
            .query(
              `SELECT count(*) AS n FROM license.outbox_events WHERE payload::jsonb #>> '{data,id}' = $1`,
              [licenseId],
            )
        )[0].n,
      );

    it('publishes the revoke and the suspension itself, and the relay adds no second copy', async () => {
      const orgId = randomUUID();
      const org = bus.as(orgId);
      const keyPair = await org.send(Messages.keyPair.create, {});
      const product = await catalogProduct(orgId, keyPair.id);
      const suspended = await org.send(Messages.license.create, { product_id: product.id });
      const revoked = await org.send(Messages.license.create, { product_id: product.id });
      const relay = app.get(OutboxRelay);
      await relay.onApplicationShutdown(); // no loop, no notification: only the answer's own publication
      try {
        await org.send(Messages.license.update, { id: suspended.id, changes: { status: 'suspended' } });
        await org.send(Messages.license.revoke, { id: revoked.id });
        // In the stream while the relay is stopped, and still in the outbox for it.
        await recorder.waitFor('license.suspended', (e) => e.data.id === suspended.id);
        await recorder.waitFor('license.revoked', (e) => e.data.id === revoked.id);
        expect(await outboxOf(revoked.id)).toBeGreaterThan(0);
      } finally {
        await relay.onApplicationBootstrap();
      }
      // The relay, running again, publishes its copies too (a drain of this test's own would find
      // the rows held by the relay's loop, and return before they are gone).
      await waitFor(async () => (await outboxOf(revoked.id)) === 0 && (await outboxOf(suspended.id)) === 0, {
        what: 'the relay to publish its copies',
      });
      // JetStream dropped the relay's copy: it has the same message id.
      const marker = await org.send(Messages.license.create, { product_id: product.id });
      await recorder.waitFor('license.created', (e) => e.data.id === marker.id);
      expect(recorder.of('license.revoked', (e) => e.data.id === revoked.id)).toHaveLength(1);
      expect(recorder.of('license.suspended', (e) => e.data.id === suspended.id)).toHaveLength(1);
    });

    it("publishes the first revoke's event when a revoke that answered 503 is sent again", async () => {
      const orgId = randomUUID();
      const org = bus.as(orgId);
      const keyPair = await org.send(Messages.keyPair.create, {});
      const product = await catalogProduct(orgId, keyPair.id);
      const license = await org.send(Messages.license.create, { product_id: product.id });
      const relay = app.get(OutboxRelay);
      await relay.onApplicationShutdown();
      const publishNow = jest
        .spyOn(relay, 'publishNow')
        .mockRejectedValueOnce(new Error('JetStream is away'));
      try {
        // Committed, but its event could not be published: the caller is told to retry.
        await expect(org.send(Messages.license.revoke, { id: license.id })).rejects.toMatchObject({
          code: 'unavailable',
        });
        expect(await outboxOf(license.id)).toBeGreaterThan(0);
        // The retry finds the license revoked already, and publishes the first revoke's event.
        await org.send(Messages.license.revoke, { id: license.id });
        await recorder.waitFor('license.revoked', (e) => e.data.id === license.id);
      } finally {
        publishNow.mockRestore();
        await relay.onApplicationBootstrap();
      }
    });

    it('never waits for a batch another relay holds, even one that never commits', async () => {
      const orgId = randomUUID();
      const org = bus.as(orgId);
      const keyPair = await org.send(Messages.keyPair.create, {});
      const product = await catalogProduct(orgId, keyPair.id);
      const relay = app.get(OutboxRelay);
      await relay.onApplicationShutdown();
      // Another replica's relay, cut off mid-batch: it holds every pending row and publishes nothing.
      const other = new Client({ connectionString: (app.get(DataSource).options as { url: string }).url });
      await other.connect();
      try {
        const license = await org.send(Messages.license.create, { product_id: product.id });
        await other.query('BEGIN');
        expect(
          (await other.query('DELETE FROM license.outbox_events RETURNING id')).rowCount,
        ).toBeGreaterThan(0);
        const started = Date.now();
        await org.send(Messages.license.revoke, { id: license.id });
        expect(Date.now() - started).toBeLessThan(2_000);
        await recorder.waitFor('license.revoked', (e) => e.data.id === license.id);
        await other.query('ROLLBACK');
      } finally {
        await other.end();
        await relay.onApplicationBootstrap();
      }
    });
  });

  it('fills a verify miss through the revocation service, with the entry every other path produces', async () => {
    const orgId = randomUUID();
    const org = bus.as(orgId);
    const keyPair = await org.send(Messages.keyPair.create, {});
    const product = await catalogProduct(orgId, keyPair.id);
    const license = await org.send(Messages.license.create, { product_id: product.id });
    await org.send(Messages.license.update, { id: license.id, changes: { status: 'suspended' } });
    const mine = () => cached.filter((entry) => (entry as SerialStatus).serial === license.serial);
    const writtenThrough = mine();

    // The scripted revocation service writes nothing, so every verify of the serial is a miss.
    await org.send(Messages.license.verify, { license_blob: license.license_blob, product_id: product.id });
    const fill = await waitFor(() => mine()[writtenThrough.length], { what: 'the fill of the verify miss' });

    // The same status the write-through sent, and the one a cache miss of check-revocation is answered.
    const [answered] = await org.send(Messages.license.statuses, { serials: [license.serial] });
    expect(fill).toEqual(answered);
    expect(fill).toEqual(writtenThrough.at(-1));
    expect(fill).toMatchObject({ serial: license.serial, org_id: orgId, status: 'suspended' });
  });

  describe('a license created in one statement', () => {
    const actor = { api_key_id: randomUUID(), prefix: 'lk_test1234', name: 'creates' };
    let audits: EventRecorder;
    beforeAll(async () => {
      audits = await EventRecorder.start(namespace, Streams.audit);
    });
    afterAll(() => audits.stop());

    const auditOf = (resourceId: string) =>
      audits.events.filter((entry) => (entry as { resource_id?: string }).resource_id === resourceId);
    const licensesOf = async (productId: string): Promise<number> => {
      const [{ count }] = await app
        .get(DataSource)
        .query('SELECT count(*)::int AS count FROM license.licenses WHERE product_id = $1', [productId]);
      return count as number;
    };

    it('writes each of concurrent creates with its license.created event and its audit entry', async () => {
      const orgId = randomUUID();
      const org = bus.as(orgId, actor);
      const keyPair = await org.send(Messages.keyPair.create, {});
      const product = await catalogProduct(orgId, keyPair.id);
      const licenses = await Promise.all(
        Array.from({ length: 20 }, (_, n) =>
          org.send(Messages.license.create, { product_id: product.id, customer_email: `c${n}@example.com` }),
        ),
      );
      expect(new Set(licenses.map((license) => license.serial)).size).toBe(20);
      expect(await licensesOf(product.id)).toBe(20);
      for (const { license_blob, ...license } of licenses) {
        expect(license_blob).toEqual(expect.any(String));
        const event = await recorder.waitFor('license.created', (e) => e.data.id === license.id);
        expect(event).toMatchObject({ org_id: orgId, data: license });
        expect(event.serial_status).toMatchObject({ serial: license.serial, status: 'active' });
        const [entry] = await waitFor(() => auditOf(license.id).length > 0 && auditOf(license.id), {
          what: `the audit entry of ${license.id}`,
        });
        expect(auditOf(license.id)).toHaveLength(1);
        expect(entry).toMatchObject({
          org_id: orgId,
          action: 'created',
          resource_type: 'license',
          actor,
          changes: { serial: { from: null, to: license.serial } },
        });
      }
    });

    it('audits only a create an API key asked for', async () => {
      const orgId = randomUUID();
      const keyPair = await bus.as(orgId).send(Messages.keyPair.create, {});
      const product = await catalogProduct(orgId, keyPair.id);
      const unaudited = await bus.as(orgId).send(Messages.license.create, { product_id: product.id });
      const audited = await bus.as(orgId, actor).send(Messages.license.create, { product_id: product.id });
      // The outbox is published in the order it was written: the first entry would be there already.
      await waitFor(() => auditOf(audited.id).length > 0, { what: 'the second audit entry' });
      expect(auditOf(unaudited.id)).toEqual([]);
      await recorder.waitFor('license.created', (e) => e.data.id === unaudited.id);
    });

    it("sends a relay batch's audit entries of one organization as one message, and each event alone", async () => {
      const orgs = [randomUUID(), randomUUID()];
      const products = await Promise.all(
        orgs.map(async (orgId) => {
          const keyPair = await bus.as(orgId, actor).send(Messages.keyPair.create, {});
          return catalogProduct(orgId, keyPair.id);
        }),
      );
      const relay = app.get(OutboxRelay);
      await relay.onApplicationShutdown(); // the rows wait in the outbox, to be taken in one batch
      const owners = [0, 0, 0, 1, 1];
      let created: Array<{ id: string }>;
      try {
        created = await Promise.all(
          owners.map((n) =>
            bus.as(orgs[n], actor).send(Messages.license.create, { product_id: products[n].id }),
          ),
        );
        await relay.drain();
      } finally {
        await relay.onApplicationBootstrap();
      }
      const entries = await waitFor(
        () => created.every(({ id }) => auditOf(id).length === 1) && created.map(({ id }) => auditOf(id)[0]),
        { what: 'the audit entries of the five licenses' },
      );
      const messageIds = entries.map((entry) => entry.messageId);
      expect(new Set(messageIds.slice(0, 3)).size).toBe(1);
      expect(new Set(messageIds.slice(3)).size).toBe(1);
      expect(messageIds[0]).not.toBe(messageIds[3]);
      for (const [n, entry] of entries.entries())
        expect(entry.subject).toBe(`${namespace}.licensing.audit.${orgs[owners[n]]}`);
      for (const license of created) {
        const event = await recorder.waitFor('license.created', (e) => e.data.id === license.id);
        expect(event.messageId).toBe(event.id);
      }
    });

    it("wakes this process's relay itself, and notifies the other replicas' only while it has none", async () => {
      const orgId = randomUUID();
      const org = bus.as(orgId);
      const keyPair = await org.send(Messages.keyPair.create, {});
      const product = await catalogProduct(orgId, keyPair.id);
      const dataSource = app.get(DataSource);
      const listener = new Client({ connectionString: (dataSource.options as { url: string }).url });
      const notified: string[] = [];
      listener.on('notification', ({ channel }) => notified.push(channel));
      await listener.connect();
      await listener.query('LISTEN outbox_license');
      const relay = app.get(OutboxRelay);
      try {
        const woken = await org.send(Messages.license.create, { product_id: product.id });
        await recorder.waitFor('license.created', (e) => e.data.id === woken.id);
        expect(notified).toEqual([]);

        await relay.onApplicationShutdown(); // as while this replica shuts down
        const waiting = await org.send(Messages.license.create, { product_id: product.id });
        await waitFor(() => notified.length > 0, { what: 'the notification to the other relays' });
        expect(notified).toEqual(['outbox_license']);
        await relay.onApplicationBootstrap();
        await recorder.waitFor('license.created', (e) => e.data.id === waiting.id);
      } finally {
        if (!relay.isRunning) await relay.onApplicationBootstrap();
        await listener.end();
      }
    });

    it('makes the license from the version of the product current when it commits', async () => {
      const orgId = randomUUID();
      const org = bus.as(orgId);
      const keyPair = await org.send(Messages.keyPair.create, {});
      const product = await catalogProduct(orgId, keyPair.id);
      await org.send(Messages.license.create, { product_id: product.id });
      // A newer version that this service's catalog never told itself about (another replica applied it).
      await app.get(DataSource).query(
        `UPDATE license.catalog_products
            SET name = 'Renamed', default_features = '{gold}', default_valid_days = 7,
                updated_at = updated_at + interval '1 second'
          WHERE id = $1`,
        [product.id],
      );
      const license = await org.send(Messages.license.create, { product_id: product.id });
      expect(license).toMatchObject({ product_name: 'Renamed', features: ['gold'] });
      expect((Date.parse(license.valid_until!) - Date.parse(license.valid_from)) / 86_400_000).toBe(7);
    });

    it('leaves nothing when the product is retired while the statement waits for its row', async () => {
      const orgId = randomUUID();
      const org = bus.as(orgId, actor);
      const keyPair = await org.send(Messages.keyPair.create, {});
      const product = await catalogProduct(orgId, keyPair.id);
      const first = await org.send(Messages.license.create, { product_id: product.id });
      const dataSource = app.get(DataSource);
      // A retirement in progress: the row locked for update, as CatalogService.retire locks it.
      const retiring = dataSource.createQueryRunner();
      await retiring.connect();
      try {
        await retiring.startTransaction();
        await retiring.query('SELECT 1 FROM license.catalog_products WHERE id = $1 FOR UPDATE', [product.id]);
        const create = org.send(Messages.license.create, { product_id: product.id }).then(
          () => 'created',
          (error: { code: string }) => error.code,
        );
        await waitFor(
          async () =>
            (
              await dataSource.query(
                `SELECT 1 FROM pg_stat_activity
                  WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'WITH product AS%'`,
              )
            ).length === 1,
          { what: 'the create waiting for the product row' },
        );
        await retiring.query(
          'UPDATE license.catalog_products SET retired_at = now(), key_pair_id = NULL WHERE id = $1',
          [product.id],
        );
        await retiring.commitTransaction();
        expect(await create).toBe('not_found');
      } finally {
        await retiring.release();
      }
      expect(await licensesOf(product.id)).toBe(1);
      // Nothing of the refused create reached the outbox: a later create's entries arrive after
      // where its would have been, and the product has only the first license's event and entry.
      const other = await catalogProduct(orgId, keyPair.id);
      const later = await org.send(Messages.license.create, { product_id: other.id });
      await recorder.waitFor('license.created', (e) => e.data.id === later.id);
      await waitFor(() => auditOf(later.id).length > 0, { what: 'the later audit entry' });
      expect(recorder.of('license.created', (e) => e.data.product_id === product.id)).toHaveLength(1);
      expect(
        audits.events.filter(
          (entry) =>
            (entry as { changes?: { product_id?: { to: string } } }).changes?.product_id?.to === product.id,
        ),
      ).toHaveLength(1);
      expect(auditOf(first.id)).toHaveLength(1);
    });
  });
});
