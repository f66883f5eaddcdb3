import {
  ApiClient,
  ApiResponse,
  TEST_DATABASE_URL,
  TcpProxy,
  startTcpProxy,
  waitFor,
} from '@licensing/shared/testing';
import { apiKeyWithScopes, createLicense, productWithKeyPair } from './support/fixtures';
import { TestOrganization, TestStack, startStack } from './support/stack';

const OUTAGE_MS = 12_000;

/**
 * PostgreSQL cut off from every service for 12 s (a restart, a failover, a network fault), behind
 * a TCP proxy of the test's own: the machine's server keeps running. Every timer, sweeper and
 * background loop ticks many times meanwhile (their intervals are shortened to 200 ms); none may
 * end the process, every answer is a 2xx or a 503 with Retry-After, and the platform serves again
 * once the database is back, without a restart.
 */
describe('a PostgreSQL outage under every service', () => {
  let proxy: TcpProxy;
  let stack: TestStack;
  let org: TestOrganization;
  let client: ApiClient;
  /** Whatever rejected unhandled in this process: in production, each would have ended the process. */
  const unhandled: unknown[] = [];
  const recordUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', recordUnhandled);
    const database = new URL(TEST_DATABASE_URL);
    proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port || 5432) });
    database.port = String(proxy.port);
    const every = '200';
    stack = await startStack({
      env: {
        DATABASE_URL: database.toString(),
        PRODUCT_DELETION_SWEEP_MS: every,
        LICENSE_EXPIRY_SWEEP_MS: every,
        ACTIVATION_SWEEP_MS: every,
        USES_RESET_SWEEP_MS: every,
      },
    });
    org = await stack.newOrganization();
    client = (await apiKeyWithScopes(org.api, ['client'])).api;
  });
  afterAll(async () => {
    await proxy.restore();
    await stack.close();
    await proxy.close();
    process.off('unhandledRejection', recordUnhandled);
  });

  it('keeps every service running, answers 503 with Retry-After meanwhile, and serves again once it is back', async () => {
    const { product } = await productWithKeyPair(org.api, { activation_heartbeat_interval: 1 });
    const license = await createLicense(org.api, { product_id: product.id, max_seats: 5 });
    expect(
      (await client.post('/api/v1/activations', { license_id: license.id, fingerprint: 'm-1' })).status,
    ).toBe(201);

    await proxy.cut();
    const answers: ApiResponse[] = [];
    const until = Date.now() + OUTAGE_MS;
    while (Date.now() < until) {
      answers.push(
        await org.api.get(`/api/v1/licenses/${license.id}`),
        await org.api.post('/api/v1/licenses', { product_id: product.id }),
        await client.post('/api/v1/activations', { license_id: license.id, fingerprint: 'm-2' }),
        await org.api.get(`/api/v1/products/${product.id}`),
      );
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await proxy.restore();

    const refused = answers.filter((answer) => answer.status >= 300);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect({ status: answer.status, code: answer.body?.code }).toEqual({
        status: 503,
        code: 'unavailable',
      });
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }

    // Back without a restart: reads, writes, seats and usage.
    await waitFor(async () => (await org.api.get(`/api/v1/licenses/${license.id}`)).status === 200, {
      what: 'the license service to read again',
      timeoutMs: 30_000,
    });
    const created = await waitFor(
      async () => {
        const answer = await org.api.post('/api/v1/licenses', { product_id: product.id });
        return answer.status === 201 && answer;
      },
      { what: 'a license create to succeed again', timeoutMs: 30_000 },
    );
    expect(created.body.serial).toMatch(/^LIC-/);
    expect((await client.post('/api/v1/licenses/sync', { license_serial: created.body.serial })).status).toBe(
      200,
    );
    await waitFor(
      async () => (await org.api.get(`/api/v1/licenses/${created.body.id}/usage`)).body.syncs === 1,
      {
        what: 'the sync to be counted',
        timeoutMs: 30_000,
      },
    );
    // The sweeper removed the lapsed activation once it could.
    await waitFor(
      async () =>
        (await org.api.get(`/api/v1/activations?license_id=${license.id}`)).body.activations.length === 0,
      { what: 'the lapsed activation to be swept', timeoutMs: 30_000 },
    );
    expect(unhandled.map(String)).toEqual([]);
  }, 120_000);
});
