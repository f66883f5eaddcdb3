import { get } from 'node:http';
import { waitFor } from '@licensing/shared/testing';
import { httpUrlOf } from './support/http-address';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, productWithKeyPair } from './support/fixtures';
import { WebhookReceiver } from './support/webhook-receiver';

const SERVICES = [
  'product-service',
  'license-service',
  'revocation-service',
  'analytics-service',
  'webhook-service',
];

interface Scrape {
  status: number;
  contentType: string;
  text: string;
}

function scrape(url: string): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    get(`${url}/metrics`, { agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: String(response.headers['content-type']),
          text,
        }),
      );
    }).on('error', reject);
  });
}

/** The value of one series (`name{a="b",…}` with exactly these labels, in any order), or undefined. */
function valueOf(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').match(/\w+="(?:[^"\\]|\\.)*"/g) ?? [];
    if ([...present].sort().join(',') === wanted) return Number(match[3]);
  }
  return undefined;
}

describe('/metrics after real traffic', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    org = await stack.newOrganization();
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    await stack.close();
  });

  it('is served in Prometheus format without an API key by the gateway and on every health port', async () => {
    for (const url of [stack.baseUrl, ...SERVICES.map((name) => httpUrlOf(stack.service(name)))]) {
      const answer = await scrape(url);
      expect({ url, status: answer.status, type: answer.contentType }).toEqual({
        url,
        status: 200,
        type: expect.stringContaining('text/plain') as unknown,
      });
      // Node.js process metrics.
      expect(valueOf(answer.text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
      expect(answer.text).toContain('nodejs_eventloop_lag_seconds');
    }
  });

  it('counts HTTP and bus requests, cache hits and misses, licenses, activations, syncs and webhook deliveries', async () => {
    const before = (await scrape(stack.baseUrl)).text;
    const counter = (text: string, name: string, labels?: Record<string, string>) =>
      valueOf(text, name, labels) ?? 0;

    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id, max_seats: 2 });
    const { api: client } = await apiKeyWithScopes(org.api, ['client']);
    expect((await client.post('/v1/activations', { license_id: license.id, fingerprint: 'm1' })).status).toBe(
      201,
    );
    // The new license is written through to the cache (a hit); an unknown serial is a miss, then cached.
    const unknown = `LIC-NOPE-${Date.now().toString(16).toUpperCase().padStart(16, '0')}`;
    for (let i = 0; i < 2; i++) {
      const check = await client.post('/api/v1/licenses/check-revocation', {
        serials: [license.serial, unknown],
      });
      expect(check.status).toBe(200);
    }
    expect((await client.post('/api/v1/licenses/sync', { license_serial: license.serial })).status).toBe(200);
    expect((await org.api.get('/api/v1/products/not-a-uuid')).status).toBe(400);
    const hook = await org.api.post('/api/v1/webhooks', { url: receiver.url, events: ['license.created'] });
    expect(hook.status).toBe(201);
    expect((await org.api.post(`/api/v1/webhooks/${hook.body.id}/test`)).status).toBe(202);

    const after = await waitFor(
      async () => {
        const text = (await scrape(stack.baseUrl)).text;
        return counter(text, 'licensing_webhook_delivery_attempts_total', { outcome: 'delivered' }) >
          counter(before, 'licensing_webhook_delivery_attempts_total', { outcome: 'delivered' })
          ? text
          : undefined;
      },
      { what: 'the test delivery to be counted' },
    );
    const grew = (name: string, labels?: Record<string, string>) =>
      counter(after, name, labels) - counter(before, name, labels);

    const route = (method: string, path: string, status: string) => ({ method, route: path, status });
    expect(
      grew('licensing_http_request_duration_seconds_count', route('POST', '/api/v1/licenses', '201')),
    ).toBe(1);
    expect(
      grew(
        'licensing_http_request_duration_seconds_count',
        route('POST', '/api/v1/licenses/check-revocation', '200'),
      ),
    ).toBe(2);
    expect(
      grew('licensing_http_request_duration_seconds_count', route('GET', '/api/v1/products/:id', '400')),
    ).toBe(1);
    expect(
      grew('licensing_bus_request_duration_seconds_count', { subject: 'license.create.v1', outcome: 'ok' }),
    ).toBe(1);
    expect(grew('licensing_revocation_cache_lookups_total', { result: 'miss' })).toBeGreaterThanOrEqual(1);
    expect(grew('licensing_revocation_cache_lookups_total', { result: 'hit' })).toBeGreaterThanOrEqual(1);
    expect(grew('licensing_licenses_created_total')).toBe(1);
    expect(grew('licensing_activations_created_total')).toBe(1);
    expect(grew('licensing_syncs_total', { status: 'ok' })).toBe(1);
  });

  it('reports consumer lag per durable, outbox backlog per schema and each dependency', async () => {
    const { text } = await scrape(httpUrlOf(stack.service('analytics-service')));
    expect(
      valueOf(text, 'licensing_jetstream_consumer_lag', {
        stream: 'SYNC_REPORTS',
        durable: 'analytics-service',
      }),
    ).toEqual(expect.any(Number));
    for (const schema of ['product', 'license']) {
      expect({ schema, backlog: valueOf(text, 'licensing_outbox_backlog', { schema }) }).toEqual({
        schema,
        backlog: expect.any(Number) as unknown,
      });
    }
    for (const dependency of ['nats', 'database', 'redis']) {
      expect({ dependency, up: valueOf(text, 'licensing_dependency_up', { dependency }) }).toEqual({
        dependency,
        up: 1,
      });
    }
  });
});
