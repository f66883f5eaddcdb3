import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { JetStreamManager, NatsConnection, connect } from 'nats';
import { scopedReportId, serialCacheKey } from '@licensing/app/revocation-service';
import { Streams, SyncReportRecord } from '@licensing/contracts';
import { streamName } from '@licensing/shared/messaging';
import { ApiClient, waitFor, TEST_NATS_URL, TEST_REDIS_URL } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, productWithKeyPair, sql } from './support/fixtures';

describe('check-revocation and sync through the gateway', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;
  let product: any;
  let redis: Redis;
  let nats: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    stack = await startStack();
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    ({ product } = await productWithKeyPair(org.api));
    redis = new Redis(TEST_REDIS_URL);
    nats = await connect({ servers: TEST_NATS_URL });
    jsm = await nats.jetstreamManager();
  });
  afterAll(async () => {
    await stack.close();
    for (const name of [Streams.syncReports.name, Streams.events.name]) {
      await jsm.streams.delete(streamName(stack.namespace, name)).catch(() => undefined);
    }
    const keys = await redis.keys(`${stack.namespace}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await Promise.all([nats.close(), redis.quit()]);
  });

  const check = (serials: unknown, api: ApiClient = org.api) =>
    api.post('/api/v1/licenses/check-revocation', { serials });
  const sync = (body: Record<string, unknown>, api: ApiClient = org.api) =>
    api.post('/api/v1/licenses/sync', body);
  const cacheKey = (serial: string, orgId = org.id) => serialCacheKey(redis, stack.namespace, orgId, serial);
  const unknownSerial = () => `LIC-NOPE-${randomUUID()}`;
  const license = (body: Record<string, unknown> = {}) =>
    createLicense(org.api, { product_id: product.id, ...body });
  const revoke = async (id: string) =>
    expect((await org.api.delete(`/api/v1/licenses/${id}`)).status).toBe(200);

  /** What JetStream holds for this stack right now (its own stream: only this file's reports). */
  async function storedReports(): Promise<SyncReportRecord[]> {
    const stream = streamName(stack.namespace, Streams.syncReports.name);
    const { state } = await jsm.streams.info(stream);
    const reports: SyncReportRecord[] = [];
    for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(stream, { seq }).catch(() => undefined);
      if (message) reports.push(message.json<SyncReportRecord>());
    }
    return reports;
  }

  it("answers active, revoked and not_found; another organization's serial is not_found", async () => {
    const active = await license();
    const revoked = await license();
    await revoke(revoked.id);
    const revokedAt = (await org.api.get(`/api/v1/licenses/${revoked.id}`)).body.revoked_at;
    const { product: foreignProduct } = await productWithKeyPair(other.api);
    const foreign = await createLicense(other.api, { product_id: foreignProduct.id });
    const unknown = unknownSerial();

    const response = await check([active.serial, revoked.serial, unknown, foreign.serial]);
    expect(response.status).toBe(200);
    expect(response.body.results).toEqual([
      { serial: active.serial, status: 'active', revoked_at: null },
      { serial: revoked.serial, status: 'revoked', revoked_at: revokedAt },
      { serial: unknown, status: 'not_found', revoked_at: null },
      { serial: foreign.serial, status: 'not_found', revoked_at: null },
    ]);
    expect(new Date(response.body.checked_at).toISOString()).toBe(response.body.checked_at);

    // Same answers once they come from the cache, and the owner still sees its own license.
    await waitFor(
      async () =>
        (await redis.exists(await cacheKey(active.serial), await cacheKey(foreign.serial, other.id))) === 2,
      {
        what: 'the cache to be filled',
      },
    );
    expect((await check([active.serial, revoked.serial, unknown, foreign.serial])).body.results).toEqual(
      response.body.results,
    );
    expect((await check([foreign.serial], other.api)).body.results).toEqual([
      { serial: foreign.serial, status: 'active', revoked_at: null },
    ]);
  });

  it('answers a repeated serial once, in the order of first appearance, under both prefixes', async () => {
    const [first, second] = await Promise.all([license(), license()]);
    const unknown = unknownSerial();
    const serials = [second.serial, first.serial, second.serial, unknown, first.serial, unknown];
    for (const path of ['/api/v1/licenses/check-revocation', '/v1/licenses/check-revocation']) {
      const response = await org.api.post(path, { serials });
      expect(response.status).toBe(200);
      expect(response.body.results.map((r: { serial: string }) => r.serial)).toEqual([
        second.serial,
        first.serial,
        unknown,
      ]);
    }
  });

  it.each([
    ['no serials', { serials: [] }],
    ['101 serials', { serials: Array.from({ length: 101 }, (_, i) => `LIC-X-${i}`) }],
    ['a serial that is not a string', { serials: ['LIC-X-1', 42] }],
    ['an empty serial', { serials: [''] }],
    ['serials that are not a list', { serials: 'LIC-X-1' }],
    ['no serials field', {}],
    ['an unknown field', { serials: ['LIC-X-1'], extra: true }],
  ])('rejects %s with 400 validation_failed', async (_case, body) => {
    const response = await org.api.post('/api/v1/licenses/check-revocation', body);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('validation_failed');
  });

  it('accepts exactly 100 serials', async () => {
    const serials = Array.from({ length: 100 }, () => unknownSerial());
    const response = await check(serials);
    expect(response.status).toBe(200);
    expect(response.body.results).toHaveLength(100);
  });

  it('reports an active license whose valid_until has passed as expired, from PostgreSQL and from the cache', async () => {
    const lapsed = await license();
    // Its license.created event puts it in the cache; let that land first, so that it cannot land
    // after the entry is dropped below.
    await waitFor(async () => (await redis.exists(await cacheKey(lapsed.serial))) === 1, {
      what: 'the license.created event to reach the cache',
    });
    const rows = await sql(
      `UPDATE license.licenses SET valid_until = now() - interval '1 minute', valid_from = now() - interval '2 days'
        WHERE id = $1 RETURNING id`,
      [lapsed.id],
    );
    expect(rows).toHaveLength(1);
    // SQL goes around the license service, so no event tells the cache; forget what it may hold.
    await redis.del(await cacheKey(lapsed.serial));

    const fromDatabase = await check([lapsed.serial]);
    expect(fromDatabase.body.results).toEqual([
      { serial: lapsed.serial, status: 'expired', revoked_at: null },
    ]);
    await waitFor(async () => (await redis.exists(await cacheKey(lapsed.serial))) === 1, {
      what: 'the cache entry',
    });
    const fromCache = await check([lapsed.serial]);
    expect(fromCache.body.results).toEqual([{ serial: lapsed.serial, status: 'expired', revoked_at: null }]);
    expect((await sync({ license_serial: lapsed.serial })).body).toMatchObject({ status: 'expired' });
  });

  it('a revocation is visible to check-revocation and sync as soon as DELETE has returned', async () => {
    const revoked = await license();
    expect((await check([revoked.serial])).body.results[0].status).toBe('active');
    await waitFor(async () => (await redis.exists(await cacheKey(revoked.serial))) === 1, {
      what: 'a warm cache',
    });

    await revoke(revoked.id);
    const checked = await check([revoked.serial]);
    const synced = await sync({ license_serial: revoked.serial });

    expect(checked.body.results[0]).toMatchObject({ status: 'revoked', revoked_at: expect.any(String) });
    expect(synced.body).toMatchObject({ status: 'revoked', message: 'License has been revoked' });
  });

  it('a verify miss is filled by the revocation service with the entry the license events left', async () => {
    const suspended = await license();
    const patched = await org.api.patch(`/api/v1/licenses/${suspended.id}`, { status: 'suspended' });
    expect(patched.status).toBe(200);
    // Every license event applied, so that what writes the entry after the DEL can only be the fill.
    const events = streamName(stack.namespace, Streams.events.name);
    await waitFor(
      async () => {
        const { num_pending, num_ack_pending } = await jsm.consumers.info(events, 'revocation-service');
        return num_pending === 0 && num_ack_pending === 0;
      },
      { what: "the revocation service's license events consumer to catch up" },
    );
    const key = await cacheKey(suspended.serial);
    const fromEvents = await redis.get(key);
    expect(fromEvents).toMatch(/^suspended\|/);

    await redis.del(key);
    const verified = await org.api.post('/api/v1/licenses/verify', {
      license_blob: suspended.license_blob,
      product_id: product.id,
    });
    expect(verified.body.errors).toEqual([expect.objectContaining({ code: 'suspended' })]);
    const filled = await waitFor(async () => (await redis.get(key)) ?? undefined, { what: 'the fill' });
    expect(filled).toBe(fromEvents);
  });

  it("sync answers ok, revoked and not_found (another organization's serial too) with the server time", async () => {
    const active = await license();
    const revoked = await license();
    await revoke(revoked.id);
    const { product: foreignProduct } = await productWithKeyPair(other.api);
    const foreign = await createLicense(other.api, { product_id: foreignProduct.id });

    const before = Date.now();
    const ok = await sync({ license_serial: active.serial, app_version: '2.4.1' });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ status: 'ok', message: 'License is valid', server_time: expect.any(String) });
    expect(Date.parse(ok.body.server_time)).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(ok.body.server_time).toISOString()).toBe(ok.body.server_time);

    expect((await sync({ license_serial: revoked.serial })).body).toMatchObject({
      status: 'revoked',
      message: 'License has been revoked',
    });
    for (const serial of [unknownSerial(), foreign.serial]) {
      const missing = await sync({ license_serial: serial });
      expect(missing.status).toBe(200);
      expect(missing.body).toMatchObject({ status: 'not_found', message: 'License not found' });
    }
  });

  it('accepts seats_in_use above max_seats, flags it in the message, and keeps the status ok', async () => {
    const floating = await license({ max_seats: 2 });
    const overused = await sync({ license_serial: floating.serial, seats_in_use: 3 });
    expect(overused.status).toBe(200);
    expect(overused.body.status).toBe('ok');
    expect(overused.body.message).toContain('3 seats in use exceeds the 2 allowed');

    const within = await sync({ license_serial: floating.serial, seats_in_use: 2 });
    expect(within.body).toMatchObject({ status: 'ok', message: 'License is valid' });
  });

  it('answers 200 only once JetStream has stored the report, and stores a repeated report_id once', async () => {
    const reported = await license({ max_seats: 2 });
    const reportId = randomUUID();
    const body = {
      license_serial: reported.serial,
      hardware_fingerprint: 'fp-1',
      app_version: '2.4.1',
      features_used: ['export', 'batch'],
      seats_in_use: 3,
      report_id: reportId,
    };
    expect((await sync(body)).status).toBe(200);

    // No waiting: the 200 itself promises the report is stored, under the id scoped to the organization.
    const storedId = scopedReportId(org.id, reportId);
    const stored = (await storedReports()).filter((report) => report.report_id === storedId);
    expect(stored).toEqual([
      {
        report_id: storedId,
        org_id: org.id,
        license_id: reported.id,
        product_id: product.id,
        serial: reported.serial,
        hardware_fingerprint: 'fp-1',
        app_version: '2.4.1',
        features_used: ['export', 'batch'],
        seats_in_use: 3,
        status: 'ok',
        received_at: expect.any(String),
      },
    ]);

    expect((await sync(body)).status).toBe(200);
    expect((await storedReports()).filter((report) => report.report_id === storedId)).toHaveLength(1);
  });

  it('stores a report without report_id under an id of its own, and nothing for an unknown serial', async () => {
    const reported = await license();
    const marker = `marker-${randomUUID()}`;
    expect((await sync({ license_serial: reported.serial, app_version: marker })).status).toBe(200);
    expect((await sync({ license_serial: unknownSerial(), app_version: marker })).status).toBe(200);

    const stored = (await storedReports()).filter((report) => report.app_version === marker);
    expect(stored).toEqual([
      expect.objectContaining({
        serial: reported.serial,
        report_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        hardware_fingerprint: null,
        features_used: [],
        seats_in_use: null,
      }),
    ]);
  });

  it('rejects a malformed sync report with 400', async () => {
    for (const body of [
      {},
      { license_serial: 'LIC-X-1', seats_in_use: -1 },
      { license_serial: 'LIC-X-1', report_id: 'not-a-uuid' },
      { license_serial: 'LIC-X-1', unknown: 1 },
    ]) {
      const response = await sync(body);
      expect([JSON.stringify(body), response.status, response.body.code]).toEqual([
        JSON.stringify(body),
        400,
        'validation_failed',
      ]);
    }
  });

  it('lets a client key check and sync, and a read key check but not sync', async () => {
    const reported = await license();
    const client = (await apiKeyWithScopes(org.api, ['client'])).api;
    const reader = (await apiKeyWithScopes(org.api, ['read'])).api;

    expect((await check([reported.serial], client)).status).toBe(200);
    expect((await sync({ license_serial: reported.serial }, client)).body.status).toBe('ok');
    expect((await check([reported.serial], reader)).status).toBe(200);
    const forbidden = await sync({ license_serial: reported.serial }, reader);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe('forbidden');
    expect((await stack.anonymous.post('/api/v1/licenses/check-revocation', { serials: ['x'] })).status).toBe(
      401,
    );
  });
});
