import { randomUUID } from 'node:crypto';
import { JetStreamManager, NatsConnection, connect } from 'nats';
import { Streams } from '@licensing/contracts';
import { streamName } from '@licensing/shared/messaging';
import { ApiClient, waitFor, TEST_NATS_URL } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, productWithKeyPair } from './support/fixtures';

describe('usage analytics through the gateway', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;
  let client: ApiClient;
  let reader: ApiClient;
  let nats: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    stack = await startStack();
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    ({ api: client } = await apiKeyWithScopes(org.api, ['client']));
    ({ api: reader } = await apiKeyWithScopes(org.api, ['read']));
    nats = await connect({ servers: TEST_NATS_URL });
    jsm = await nats.jetstreamManager();
  });
  afterAll(async () => {
    await stack.close();
    for (const name of [Streams.syncReports.name, Streams.events.name]) {
      await jsm.streams.delete(streamName(stack.namespace, name)).catch(() => undefined);
    }
    await nats.close();
  });

  /** A window around now, where every sync of this test lands (`to` is exclusive). */
  const aroundNow = (): string => {
    const from = new Date(Date.now() - 3600_000).toISOString();
    const to = new Date(Date.now() + 3600_000).toISOString();
    return `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
  };

  it('loses no report acknowledged while the analytics service is down', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id, max_seats: 5 });
    const n = 25;
    const answered: Array<{ machine: string; server_time: string }> = [];

    await stack.stopService('analytics-service');
    try {
      for (let i = 0; i < n; i += 1) {
        const machine = `machine-${i % 3}`;
        const synced = await client.post('/api/v1/licenses/sync', {
          license_serial: license.serial,
          hardware_fingerprint: machine,
          app_version: i < 20 ? '2.4.1' : '2.10.0',
          features_used: i % 2 === 1 ? ['pro', 'export'] : ['pro'],
          // The last one reports more seats than the license has: accepted, flagged, and counted.
          seats_in_use: i === n - 1 ? 7 : 1 + (i % 3),
          report_id: randomUUID(),
        });
        expect(synced.status).toBe(200);
        expect(synced.body.status).toBe('ok');
        answered.push({ machine, server_time: synced.body.server_time });
      }
    } finally {
      await stack.startService('analytics-service');
    }

    const range = aroundNow();
    const usage = await waitFor(
      async () => {
        const response = await reader.get(`/api/v1/analytics/usage?interval=hour&${range}`);
        const syncs = response.body.buckets.reduce((sum: number, b: { syncs: number }) => sum + b.syncs, 0);
        return syncs >= n && response.body;
      },
      { what: `${n} syncs counted` },
    );
    expect(usage.buckets.reduce((sum: number, b: { syncs: number }) => sum + b.syncs, 0)).toBe(n);
    expect(usage.total).toBe(usage.buckets.length);
    for (const bucket of usage.buckets) expect(bucket.licenses).toBe(1);
    expect(Math.max(...usage.buckets.map((b: { peak_seats_in_use: number }) => b.peak_seats_in_use))).toBe(7);

    const lastOf = (machine: string) => answered.filter((a) => a.machine === machine).at(-1)!.server_time;
    const byRecency = ['machine-0', 'machine-1', 'machine-2'].sort((a, b) =>
      lastOf(b).localeCompare(lastOf(a)),
    );
    const own = await reader.get(`/api/v1/licenses/${license.id}/usage`);
    expect(own.status).toBe(200);
    expect(own.body).toEqual({
      license_id: license.id,
      last_sync_at: answered.at(-1)!.server_time,
      syncs: n,
      peak_seats_in_use: 7,
      versions: ['2.4.1', '2.10.0'],
      fingerprints: byRecency.map((machine) => ({ fingerprint: machine, last_sync_at: lastOf(machine) })),
      total: 3,
      increments: 0,
      uses_counted: 0,
      last_increment_at: null,
      daily: [...new Set(answered.map((a) => a.server_time.slice(0, 10)))].map((day) => ({
        day,
        syncs: answered.filter((a) => a.server_time.startsWith(day)).length,
        machines: new Set(answered.filter((a) => a.server_time.startsWith(day)).map((a) => a.machine)).size,
      })),
    });
    const secondPage = await reader.get(`/v1/licenses/${license.id}/usage?per_page=2&page=2`);
    expect(secondPage.body).toMatchObject({
      syncs: n,
      fingerprints: [{ fingerprint: byRecency[2] }],
      total: 3,
    });

    expect((await reader.get(`/api/v1/analytics/features?${range}`)).body).toEqual({
      features: [
        { feature: 'pro', count: n },
        { feature: 'export', count: 12 },
      ],
      total: 2,
    });
    expect((await reader.get(`/v1/analytics/versions?${range}&product_id=${product.id}`)).body).toEqual({
      versions: [
        { app_version: '2.4.1', count: 20 },
        { app_version: '2.10.0', count: 5 },
      ],
      total: 2,
    });

    expect(
      (await reader.get(`/api/v1/analytics/active?window=24h&product_id=${product.id}`)).body,
    ).toMatchObject({
      window: '24h',
      licenses: 1,
      machines: 3,
    });
    expect(
      (await reader.get(`/api/v1/licenses/${license.id}/usage?product_id=${product.id}`)).body.syncs,
    ).toBe(n);

    // Another organization sees none of it, and cannot tell the license exists.
    expect((await other.api.get(`/api/v1/analytics/usage?${range}`)).body).toEqual({
      interval: 'day',
      buckets: [],
      total: 0,
    });
    expect((await other.api.get(`/api/v1/analytics/features?${range}`)).body).toEqual({
      features: [],
      total: 0,
    });
    const foreign = await other.api.get(`/api/v1/licenses/${license.id}/usage`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('not_found');
  });

  it("counts each organization's report once, whatever report_id another organization used first", async () => {
    const licenseA = await createLicense(org.api, {
      product_id: (await productWithKeyPair(org.api)).product.id,
    });
    const licenseB = await createLicense(other.api, {
      product_id: (await productWithKeyPair(other.api)).product.id,
    });
    const clientB = (await apiKeyWithScopes(other.api, ['client'])).api;
    const shared = [randomUUID(), '00000000-0000-0000-0000-000000000000', randomUUID()];
    const syncsOf = async (api: ApiClient, licenseId: string) =>
      (await api.get(`/api/v1/licenses/${licenseId}/usage`)).body.syncs as number;
    for (const report_id of shared) {
      // A first, then B with the same id: both answered 200, both stored.
      expect(
        (await client.post('/api/v1/licenses/sync', { license_serial: licenseA.serial, report_id })).status,
      ).toBe(200);
      expect(
        (await clientB.post('/api/v1/licenses/sync', { license_serial: licenseB.serial, report_id })).status,
      ).toBe(200);
      // A retry within each organization is still counted once.
      expect(
        (await clientB.post('/api/v1/licenses/sync', { license_serial: licenseB.serial, report_id })).status,
      ).toBe(200);
    }
    await waitFor(async () => (await syncsOf(other.api, licenseB.id)) === shared.length, {
      what: "B's reports, each once",
    });
    await waitFor(async () => (await syncsOf(org.api, licenseA.id)) === shared.length, {
      what: "A's reports, each once",
    });
    // A marker sent last: once it is counted, a duplicate sent before it would have been too.
    await clientB.post('/api/v1/licenses/sync', { license_serial: licenseB.serial, report_id: randomUUID() });
    await waitFor(async () => (await syncsOf(other.api, licenseB.id)) >= shared.length + 1, {
      what: 'the marker',
    });
    expect(await syncsOf(other.api, licenseB.id)).toBe(shared.length + 1);
  });

  it('answers empty usage for a license that never synced, and 404 for one that does not exist', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id });
    expect((await reader.get(`/api/v1/licenses/${license.id}/usage`)).body).toEqual({
      license_id: license.id,
      last_sync_at: null,
      syncs: 0,
      peak_seats_in_use: null,
      versions: [],
      fingerprints: [],
      total: 0,
      increments: 0,
      uses_counted: 0,
      last_increment_at: null,
      daily: [],
    });
    const missing = await reader.get(`/api/v1/licenses/${randomUUID()}/usage`);
    expect(missing.status).toBe(404);
  });

  it('validates the range, the interval and the ids with field errors', async () => {
    const bad = async (path: string, field: string) => {
      const response = await reader.get(path);
      expect([path, response.status, response.body.code]).toEqual([path, 400, 'validation_failed']);
      expect(response.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    };
    await bad('/api/v1/analytics/usage?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z', 'to');
    await bad(
      '/api/v1/analytics/usage?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&interval=hour',
      'to',
    );
    await bad(
      '/api/v1/analytics/usage?from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z&interval=week',
      'interval',
    );
    await bad('/api/v1/analytics/features?from=yesterday&to=2026-03-02T00:00:00Z', 'from');
    await bad('/api/v1/analytics/versions?to=2026-03-02T00:00:00Z', 'from');
    await bad(
      '/api/v1/analytics/versions?from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z&product_id=x',
      'product_id',
    );
    await bad(
      '/api/v1/analytics/usage?from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z&per_page=101',
      'per_page',
    );
    const notUuid = await reader.get('/api/v1/licenses/not-a-uuid/usage');
    expect(notUuid.status).toBe(400);
  });

  it('lets read keys see analytics, and not client keys', async () => {
    const range = aroundNow();
    expect((await reader.get(`/api/v1/analytics/usage?${range}`)).status).toBe(200);
    const refused = await client.get(`/api/v1/analytics/usage?${range}`);
    expect(refused.status).toBe(403);
    expect((await client.get(`/api/v1/licenses/${randomUUID()}/usage`)).status).toBe(403);
  });
});
