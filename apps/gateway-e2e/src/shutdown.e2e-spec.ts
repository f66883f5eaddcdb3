import { ApiClient, ApiResponse, waitFor, OwnServer, startOwnNats } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, productWithKeyPair } from './support/fixtures';

interface Outcome {
  status: number;
  ms: number;
}

/** Sends requests from `workers` loops until `stop` resolves; every answer with its time. */
async function underLoad(
  send: () => Promise<ApiResponse>,
  workers: number,
  stop: Promise<unknown>,
): Promise<Outcome[]> {
  let done = false;
  void stop.then(() => (done = true));
  const outcomes: Outcome[] = [];
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!done) {
        const started = Date.now();
        const response = await send();
        outcomes.push({ status: response.status, ms: Date.now() - started });
      }
    }),
  );
  return outcomes;
}

const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a replica stopped under load (SIGTERM, a deploy, a scale-in)', () => {
  let stack: TestStack;
  let org: TestOrganization;

  beforeAll(async () => {
    // The production grace, so in-flight work has the time it would have in a real deploy.
    stack = await startStack({ env: { SHUTDOWN_GRACE_MS: '1000' } });
    org = await stack.newOrganization();
  });
  afterAll(() => stack.close());

  it.each(['license-service', 'product-service', 'revocation-service', 'analytics-service'])(
    'leaves no request unanswered when one of two %s replicas stops',
    async (service) => {
      const { product } = await productWithKeyPair(org.api);
      const license = await createLicense(org.api, { product_id: product.id });
      const { api: client } = await apiKeyWithScopes(org.api, ['client']);
      const send: Record<string, () => Promise<ApiResponse>> = {
        'license-service': () => org.api.get(`/api/v1/licenses/${license.id}`),
        'product-service': () => org.api.get(`/api/v1/products/${product.id}`),
        'revocation-service': () =>
          client.post('/api/v1/licenses/check-revocation', { serials: [license.serial] }),
        'analytics-service': () => org.api.get(`/api/v1/licenses/${license.id}/usage`),
      };
      const replica = await stack.startReplica(service);
      // Stopped once the load runs (how long that takes depends on the machine).
      let answered = 0;
      const counted = () => send[service]!().finally(() => (answered += 1));
      const stopped = waitFor(() => answered >= 25, { what: '25 requests answered' }).then(() =>
        replica.close(),
      );
      const outcomes = await underLoad(
        counted,
        8,
        stopped.then(() => after(300)),
      );

      expect(outcomes.length).toBeGreaterThan(30);
      expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
      expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(2_000);
    },
  );
});

describe('NATS down', () => {
  let nats: OwnServer;
  let stack: TestStack;
  let org: TestOrganization;
  let reader: ApiClient;

  beforeAll(async () => {
    nats = await startOwnNats();
    stack = await startStack({ env: { NATS_URL: nats.url } });
    org = await stack.newOrganization();
    reader = org.api;
  });
  afterAll(async () => {
    await stack.close();
    await nats.dispose();
  });

  it('is a 503 within 100 ms, not after the bus timeout, and serves again once NATS is back', async () => {
    const { product } = await productWithKeyPair(org.api);
    expect((await reader.get(`/api/v1/products/${product.id}`)).status).toBe(200);
    expect((await stack.anonymous.get('/readyz')).status).toBe(200);

    await nats.kill();
    // Not ready while it cannot answer: the load balancer sends traffic to other replicas.
    await waitFor(async () => (await stack.anonymous.get('/readyz')).status === 503, { what: 'not ready' });
    for (let i = 0; i < 5; i += 1) {
      const started = Date.now();
      const down = await reader.get(`/api/v1/products/${product.id}`);
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ code: 'unavailable' });
      expect(Date.now() - started).toBeLessThan(100);
    }

    await nats.start();
    const restarted = Date.now();
    let back: ApiResponse | undefined;
    while (Date.now() - restarted < 10_000) {
      back = await reader.get(`/api/v1/products/${product.id}`);
      if (back.status === 200) break;
      await after(100);
    }
    expect(back?.status).toBe(200);
    expect((await stack.anonymous.get('/readyz')).status).toBe(200);
  }, 30_000);
});
