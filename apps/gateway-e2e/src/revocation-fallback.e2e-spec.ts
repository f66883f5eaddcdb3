import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { connect } from 'nats';
import { serialCacheKey } from '@licensing/app/revocation-service';
import { Streams } from '@licensing/contracts';
import { streamName } from '@licensing/shared/messaging';
import { waitFor, TEST_NATS_URL, OwnServer, startOwnRedis } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { createLicense, productWithKeyPair } from './support/fixtures';

/** The stack's bus timeout (BUS_TIMEOUT_MS default): a hang on Redis would show as a call this long. */
const BUS_TIMEOUT_MS = 5_000;

describe('check-revocation while the cache Redis goes away and comes back', () => {
  let redisServer: OwnServer;
  let probe: Redis;
  let stack: TestStack;
  let org: TestOrganization;

  beforeAll(async () => {
    redisServer = await startOwnRedis();
    // Its own retries and no queue: the probe fails at once while the server is down, and then recovers.
    probe = new Redis(redisServer.url, {
      retryStrategy: () => 100,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
    });
    probe.on('error', () => undefined);
    stack = await startStack({ env: { REDIS_URL: redisServer.url } });
    org = await stack.newOrganization();
  });
  afterAll(async () => {
    await stack?.close();
    probe?.disconnect();
    await redisServer?.dispose();
    if (!stack) return;
    const nats = await connect({ servers: TEST_NATS_URL });
    const jsm = await nats.jetstreamManager();
    for (const name of [Streams.syncReports.name, Streams.events.name]) {
      await jsm.streams.delete(streamName(stack.namespace, name)).catch(() => undefined);
    }
    await nats.close();
  });

  it('answers correctly and quickly from PostgreSQL without Redis, and refills the cache once it is back', async () => {
    const { product } = await productWithKeyPair(org.api);
    const active = await createLicense(org.api, { product_id: product.id });
    const revoked = await createLicense(org.api, { product_id: product.id });
    expect((await org.api.delete(`/api/v1/licenses/${revoked.id}`)).status).toBe(200);
    const unknown = `LIC-NOPE-${randomUUID()}`;
    const serials = [active.serial, revoked.serial, unknown];
    const expected = [
      { serial: active.serial, status: 'active', revoked_at: null },
      { serial: revoked.serial, status: 'revoked', revoked_at: expect.any(String) },
      { serial: unknown, status: 'not_found', revoked_at: null },
    ];
    const keysNow = () =>
      Promise.all(serials.map((serial) => serialCacheKey(probe, stack.namespace, org.id, serial)));
    const check = () => org.api.post('/api/v1/licenses/check-revocation', { serials });

    const warm = await check();
    expect(warm.status).toBe(200);
    expect(warm.body.results).toEqual(expected);
    await waitFor(async () => (await probe.exists(...(await keysNow()))) === serials.length, {
      what: 'the cache to be filled',
    });
    expect(await probe.get((await keysNow())[2]!)).toBe('-');

    await redisServer.kill();
    for (let attempt = 0; attempt < 3; attempt++) {
      const started = Date.now();
      const cold = await check();
      const elapsed = Date.now() - started;
      expect(cold.status).toBe(200);
      expect(cold.body.results).toEqual(expected);
      expect(elapsed).toBeLessThan(BUS_TIMEOUT_MS / 2);
    }
    const synced = await org.api.post('/api/v1/licenses/sync', { license_serial: active.serial });
    expect(synced.body).toMatchObject({ status: 'ok' });
    expect(
      (await org.api.post('/api/v1/licenses/sync', { license_serial: revoked.serial })).body,
    ).toMatchObject({
      status: 'revoked',
    });

    // Same port, empty (nothing was saved): the service reconnects on its own and fills it again.
    await redisServer.start();
    await waitFor(
      async () => {
        const again = await check();
        expect(again.status).toBe(200);
        expect(again.body.results).toEqual(expected);
        return (await probe.exists(...(await keysNow()))) === serials.length;
      },
      { what: 'the cache to be refilled', timeoutMs: 15_000, intervalMs: 200 },
    );
  });

  it('never answers from a Redis restarted with a snapshot older than a revocation', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id });
    const check = () => org.api.post('/api/v1/licenses/check-revocation', { serials: [license.serial] });
    const statusNow = async () => (await check()).body.results[0].status;

    // Cached as active, and the cache saved to disk in that state.
    expect(await statusNow()).toBe('active');
    await waitFor(
      async () =>
        (await probe.exists(await serialCacheKey(probe, stack.namespace, org.id, license.serial))) === 1,
      {
        what: 'the active entry cached',
      },
    );
    expect(await probe.save()).toBe('OK');

    // Revoked after the snapshot: written through to Redis before DELETE answered.
    expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
    expect(await statusNow()).toBe('revoked');

    // Redis dies and comes back from the snapshot, which still says "active".
    await redisServer.kill();
    await redisServer.start();
    await waitFor(async () => (await probe.ping()) === 'PONG', { what: 'the probe to reconnect' });
    const stale = await probe.keys(`${stack.namespace}:s2:*:${org.id}:${license.serial}`);
    expect(stale).toHaveLength(1);
    expect(await probe.get(stale[0]!)).toMatch(/^active\|/);

    // From the first answer on, through the reconnect and the refill: revoked, never active.
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline) {
      const answer = await check();
      expect(answer.status).toBe(200);
      expect(answer.body.results[0].status).toBe('revoked');
      const synced = await org.api.post('/api/v1/licenses/sync', { license_serial: license.serial });
      expect(synced.body.status).toBe('revoked');
    }
    // And the cache serves again, from a new generation, with the right answer.
    await waitFor(
      async () =>
        (await probe.exists(await serialCacheKey(probe, stack.namespace, org.id, license.serial))) === 1,
      { what: 'the entry cached again in the new generation' },
    );
    expect(await statusNow()).toBe('revoked');
  });
});
