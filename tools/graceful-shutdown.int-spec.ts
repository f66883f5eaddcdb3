/**
 * SIGTERM under load, to real processes: the gateway and the services run as `npm start` runs them
 * (compiled, one process each), steady concurrent traffic goes through the gateway, and one process
 * gets SIGTERM mid-traffic, as a rollout or a scale-in sends it.
 *
 * - The gateway, with its default settings, behind a load balancer that follows its readiness
 *   probe: it turns unready at once, keeps serving what still reaches it for READINESS_DRAIN_MS
 *   (5 s unless set), then stops listening (connections refused, which the balancer sends
 *   elsewhere). Every request is answered 2xx, or a `503` problem (`unavailable`) if it arrived
 *   while closing; none meets a closed connection or a timeout. (What a client that ignores
 *   readiness sees on its keep-alive connections is apps/gateway/src/edge/graceful-close.int-spec.ts.)
 *   SIGINT (Ctrl-C) skips the wait.
 * - One of two revocation-service replicas: nothing but 2xx.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ApiClient,
  PlatformProcess,
  apiKeyWithScopes,
  build,
  createLicense,
  deleteNamespaceStreams,
  killAll,
  productWithKeyPair,
  testEnv,
  uniqueNamespace,
  waitFor,
} from '@licensing/shared/testing';
import { Balancer, Outcome, Request, runLoad, sleep, watchReadiness } from './support/load';

/** Answers other than 2xx and a `503 unavailable` problem to a request sent once the gateway was unready. */
function unexpected(outcomes: Outcome[], unready: number): Outcome[] {
  return outcomes.filter((o) => {
    if (o.status !== undefined && o.status >= 200 && o.status < 300) return false;
    if (o.status === 503 && o.problem && o.code === 'unavailable' && o.sent >= unready) return false;
    return true;
  });
}

describe('SIGTERM under load, to real processes', () => {
  const namespace = uniqueNamespace('term');
  const dir = mkdtempSync(path.join(tmpdir(), 'graceful-shutdown-'));
  const processes: PlatformProcess[] = [];
  let gateway: PlatformProcess;
  let admin: ApiClient;
  let requests: Array<(target: { label: string; url: string }) => Request>;

  const env = testEnv(namespace, {
    LOG_LEVEL: 'warn',
    // The production settings that matter here: a grace for messages in hand, and a gateway
    // that stays unready for a while before it drains, for its load balancers to notice.
    SHUTDOWN_GRACE_MS: '1000',
    READINESS_DRAIN_MS: '1000',
  });

  // The gateway keeps its own default drain: the safe default outside Kubernetes is under test.
  const gatewayEnv = Object.fromEntries(
    Object.entries(env).filter(([name]) => name !== 'READINESS_DRAIN_MS'),
  );

  async function start(service: string, label: string, extra: Record<string, string> = {}) {
    const base = service === 'gateway' ? gatewayEnv : env;
    const started = await PlatformProcess.create(service, label, { ...base, ...extra }, dir);
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
    gateway = await start('gateway', 'gateway', { BOOTSTRAP_DEFAULT_ORG: 'true' });
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

  it('a gateway turns unready, keeps serving what reaches it, then stops listening: no request fails', async () => {
    const readiness = watchReadiness(gateway.url);
    // Clients behind a load balancer that probes readiness every 100 ms, as an ingress follows
    // the endpoints: requests still reach the gateway for a moment after it turned unready.
    const balancer = new Balancer([{ label: gateway.label, url: gateway.url }]);
    let sent = 0;
    const outcomes: Outcome[] = [];
    let loading = true;
    const loops = Array.from({ length: 8 }, async () => {
      while (loading) {
        const outcome = await balancer.send(requests[sent++ % requests.length]!, 10_000);
        if (outcome) outcomes.push(outcome);
      }
    });
    // Steady traffic first (how long it takes depends on the machine).
    await waitFor(() => outcomes.filter((o) => o.status === 200).length > 50, {
      timeoutMs: 20_000,
      what: '50 requests answered before the signal',
    });
    const terminated = Date.now();
    const exit = await gateway.terminate();
    loading = false;
    await balancer.stop();
    await Promise.all(loops);
    const { unready, refused } = await readiness.stop();

    // Nest closes the application, then raises the signal again to end the process.
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(gateway.unexpectedExits).toEqual([]);
    // Unready first, then, after the default READINESS_DRAIN_MS of 5 s, no longer accepting connections.
    expect(unready).toBeGreaterThanOrEqual(terminated);
    expect(refused! - unready!).toBeGreaterThanOrEqual(4_900);
    // Every request answered: those in flight at SIGTERM, and those that arrived while unready.
    expect(unexpected(outcomes, unready!)).toEqual([]);
    expect(outcomes.filter((o) => o.failure !== undefined)).toEqual([]);
    expect(outcomes.filter((o) => o.status === 200 && o.sent < terminated).length).toBeGreaterThan(50);
    const inFlight = outcomes.filter((o) => o.sent < terminated && o.sent + o.ms > terminated);
    expect(inFlight.length).toBeGreaterThan(0);

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

  it('Ctrl-C (SIGINT) stops the gateway without the drain', async () => {
    const interrupted = Date.now();
    const exit = await gateway.interrupt();

    expect(exit).toEqual({ code: null, signal: 'SIGINT' });
    // Well under the 5 s drain a SIGTERM waits.
    expect(Date.now() - interrupted).toBeLessThan(3_000);
  }, 30_000);
});
