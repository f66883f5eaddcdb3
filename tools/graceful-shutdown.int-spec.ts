/**
 * SIGTERM under load, to real processes: the gateway and the services run as `npm start` runs them
 * (compiled, one process each), steady concurrent traffic goes through the gateway, and one process
 * gets SIGTERM mid-traffic, as a rollout or a scale-in sends it. What a client may see:
 *
 * - the gateway stopped: every request answered 2xx, except a `503` problem (`unavailable`) for
 *   requests that arrived once the gateway had turned unready; a connection refused once it stopped
 *   listening (the request was never accepted: a load balancer sends it elsewhere); never a
 *   connection closed under an accepted request. Its readiness probe answered 503 before it
 *   stopped accepting connections.
 * - one of two revocation-service replicas stopped: nothing but 2xx.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ApiClient,
  apiKeyWithScopes,
  createLicense,
  deleteNamespaceStreams,
  productWithKeyPair,
  testEnv,
  uniqueNamespace,
} from '@licensing/shared/testing';
import { Outcome, Request, runLoad, sleep, watchReadiness } from './support/load';
import { PlatformProcess, killAll } from './support/platform-processes';

const { build } = require('../bench/lib/platform') as { build(): void };

/** What a client may see while a gateway shuts down, apart from 2xx. */
function unexpected(outcomes: Outcome[], unready: number): Outcome[] {
  return outcomes.filter((o) => {
    if (o.status !== undefined && o.status >= 200 && o.status < 300) return false;
    if (o.status === 503 && o.problem && o.code === 'unavailable' && o.sent >= unready) return false;
    // Refused: the connection was never accepted, the request never sent.
    if (o.failure === 'refused' && o.sent >= unready) return false;
    return true;
  });
}

describe('SIGTERM under load, to real processes', () => {
  const namespace = uniqueNamespace('term');
  const dir = mkdtempSync(path.join(tmpdir(), 'graceful-shutdown-'));
  const processes: PlatformProcess[] = [];
  let gateway: PlatformProcess;
  let admin: ApiClient;
  let requests: Array<(target: PlatformProcess) => Request>;

  const env = testEnv(namespace, {
    LOG_LEVEL: 'warn',
    // The production settings that matter here: a grace for messages in hand, and a gateway
    // that stays unready for a while before it drains, for its load balancers to notice.
    SHUTDOWN_GRACE_MS: '1000',
    READINESS_DRAIN_MS: '1000',
  });

  async function start(service: string, label: string, extra: Record<string, string> = {}) {
    const started = await PlatformProcess.create(service, label, { ...env, ...extra }, dir);
    processes.push(started);
    await started.start();
    return started;
  }

  beforeAll(async () => {
    build();
    await Promise.all([
      start('product-service', 'product'),
      start('license-service', 'license'),
      start('revocation-service', 'revocation-1'),
      start('analytics-service', 'analytics'),
    ]);
    gateway = await start('gateway', 'gateway', { BOOTSTRAP_DEFAULT_ORG: 'true', NODE_ENV: 'development' });
    const key = /export LICENSING_API_KEY=(lk_\S+)/.exec(readFileSync(gateway.log, 'utf8'))?.[1];
    admin = new ApiClient(gateway.url, key);

    const { product } = await productWithKeyPair(admin);
    const license = await createLicense(admin, { product_id: product.id });
    const { key: client } = await apiKeyWithScopes(admin, ['client']);
    const as = (key: string) => ({ authorization: `Bearer ${key}` });
    requests = [
      (target) => ({
        kind: 'check-revocation',
        method: 'POST',
        url: `${target.url}/api/v1/licenses/check-revocation`,
        target: target.label,
        headers: as(client.key),
        body: { serials: [license.serial] },
      }),
      (target) => ({
        kind: 'sync',
        method: 'POST',
        url: `${target.url}/api/v1/licenses/sync`,
        target: target.label,
        headers: as(client.key),
        body: { license_serial: license.serial, hardware_fingerprint: 'machine-1', seats_in_use: 1 },
      }),
      (target) => ({
        kind: 'get-license',
        method: 'GET',
        url: `${target.url}/api/v1/licenses/${license.id}`,
        target: target.label,
        headers: as(key!),
      }),
    ];
  }, 120_000);

  afterAll(async () => {
    await killAll(processes);
    await deleteNamespaceStreams(namespace);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Load through `target` from 8 loops, cycling through the request kinds. */
  function loadThrough(target: PlatformProcess) {
    let sent = 0;
    return runLoad(() => requests[sent++ % requests.length]!(target), { workers: 8, timeoutMs: 10_000 });
  }

  it('a gateway answers what it accepted, turns unready first, then refuses only new connections', async () => {
    const readiness = watchReadiness(gateway.url);
    const load = loadThrough(gateway);
    await sleep(1_000);
    const terminated = Date.now();
    const exit = await gateway.terminate();
    await sleep(300);
    const outcomes = await load.stop();
    const { unready, refused } = await readiness.stop();

    // Nest closes the application, then raises the signal again to end the process.
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(gateway.unexpectedExits).toEqual([]);
    // Unready first, then (after READINESS_DRAIN_MS) no longer accepting connections.
    expect(unready).toBeGreaterThanOrEqual(terminated);
    expect(refused).toBeGreaterThan(unready!);
    expect(unexpected(outcomes, unready!)).toEqual([]);
    // It kept serving while unready, for the load balancers to notice (the drain).
    const servedWhileUnready = outcomes.filter((o) => o.status === 200 && o.sent > unready!);
    expect(servedWhileUnready.length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.status === 200 && o.sent < terminated).length).toBeGreaterThan(50);

    // Started again for the next case, on the same port.
    await gateway.start();
  }, 60_000);

  it('one of two revocation-service replicas stopped: every request still answers 2xx', async () => {
    const second = await start('revocation-service', 'revocation-2');
    const first = processes.find((p) => p.label === 'revocation-1')!;
    const readiness = watchReadiness(first.url);
    const load = loadThrough(gateway);
    await sleep(1_000);
    const terminated = Date.now();
    const exit = await first.terminate();
    await sleep(500);
    const outcomes = await load.stop();
    const { unready, refused } = await readiness.stop();

    // Nest closes the application, then raises the signal again to end the process.
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect([first.unexpectedExits, second.unexpectedExits]).toEqual([[], []]);
    expect(unready).toBeGreaterThanOrEqual(terminated);
    expect(refused).toBeGreaterThan(unready!);
    expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
    const revocationCalls = outcomes.filter((o) => o.kind !== 'get-license');
    expect(revocationCalls.filter((o) => o.sent > terminated).length).toBeGreaterThan(20);
  }, 60_000);
});
