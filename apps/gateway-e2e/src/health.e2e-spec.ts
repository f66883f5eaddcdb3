import { get } from 'node:http';
import { loadAnalyticsServiceConfig, startAnalyticsService } from '@licensing/app/analytics-service';
import { waitFor, OwnServer, startOwnRedis } from '@licensing/shared/testing';
import { httpUrlOf } from './support/http-address';
import { TestStack, startStack } from './support/stack';

const SERVICES = [
  'product-service',
  'license-service',
  'revocation-service',
  'analytics-service',
  'webhook-service',
];

interface Probe {
  status: number;
  body: { status?: string; message?: string; checks?: Record<string, string> };
}

/** One GET on a connection of its own, as a kubelet probe makes it (no pooled keep-alive socket). */
function probe(url: string): Promise<Probe> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as Probe['body'] }),
      );
    }).on('error', reject);
  });
}

describe('health probes of every process', () => {
  let redis: OwnServer;
  let stack: TestStack;

  beforeAll(async () => {
    // A Redis of the test's own, so that it can be killed.
    redis = await startOwnRedis();
    stack = await startStack({ env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await stack.close();
    await redis.dispose();
  });

  it('serves /health/live and /health/ready (and /healthz, /readyz) on the gateway and every health port', async () => {
    const urls = [stack.baseUrl, ...SERVICES.map((name) => httpUrlOf(stack.service(name)))];
    for (const url of urls) {
      for (const path of ['/health/live', '/healthz', '/health/ready', '/readyz']) {
        const answer = await probe(url + path);
        expect({ url, path, status: answer.status, body: answer.body.status }).toEqual({
          url,
          path,
          status: 200,
          body: 'ok',
        });
      }
    }
  });

  it('names what readiness depends on: NATS and PostgreSQL everywhere, Redis where it is used', async () => {
    const checksOf = async (url: string) => (await probe(`${url}/health/ready`)).body.checks;
    expect(await checksOf(stack.baseUrl)).toEqual({ nats: 'up', database: 'up', redis: 'up' });
    expect(await checksOf(httpUrlOf(stack.service('revocation-service')))).toEqual({
      nats: 'up',
      redis: 'up',
    });
    // The license service reads the serial-status cache on verify.
    expect(await checksOf(httpUrlOf(stack.service('license-service')))).toEqual({
      nats: 'up',
      database: 'up',
      redis: 'up',
    });
    for (const name of ['product-service', 'analytics-service', 'webhook-service']) {
      expect({ name, checks: await checksOf(httpUrlOf(stack.service(name))) }).toEqual({
        name,
        checks: { nats: 'up', database: 'up' },
      });
    }
  });

  it('a Redis lost after start is reported, not fatal; a replica that never reached Redis is not ready until it does', async () => {
    const revocation = httpUrlOf(stack.service('revocation-service'));
    await redis.kill();
    for (const url of [stack.baseUrl, revocation]) {
      await waitFor(async () => (await probe(`${url}/health/ready`)).body.checks?.redis === 'down', {
        what: `${url} to see Redis down`,
      });
      expect((await probe(`${url}/health/ready`)).status).toBe(200);
    }

    // A new replica (a rollout, a scale-out) that cannot reach Redis: not ready, so the rollout stops.
    const replica = await stack.startReplica('revocation-service');
    const replicaUrl = httpUrlOf(replica);
    const unready = await probe(`${replicaUrl}/health/ready`);
    expect(unready).toMatchObject({ status: 503, body: { message: 'redis unavailable' } });
    expect((await probe(`${replicaUrl}/health/live`)).status).toBe(200);

    await redis.start();
    await waitFor(async () => (await probe(`${replicaUrl}/health/ready`)).status === 200, {
      what: 'the new replica to be ready once Redis is back',
    });
    await replica.close();
  });

  it('is not ready from the first step of a shutdown, while in-flight work still drains', async () => {
    const replica = await startAnalyticsService(
      loadAnalyticsServiceConfig({ ...stack.env, READINESS_DRAIN_MS: '500' }),
    );
    const url = httpUrlOf(replica);
    expect((await probe(`${url}/health/ready`)).status).toBe(200);
    const closing = replica.close(); // what SIGTERM runs (enableShutdownHooks)
    const during = await probe(`${url}/health/ready`);
    expect(during).toMatchObject({ status: 503, body: { message: 'shutting down' } });
    // Still alive and still consuming: the drain has not begun.
    expect((await probe(`${url}/health/live`)).status).toBe(200);
    await closing;
  });
});
