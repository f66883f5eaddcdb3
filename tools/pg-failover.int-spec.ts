/**
 * PostgreSQL failover under load. The test runs a primary and a streaming standby of its own, and
 * puts a TCP proxy in front of them: the one endpoint the services use, as a Kubernetes `-rw`
 * Service is. The platform (one process of each service and a gateway) runs under a steady load
 * of writes a client retries (license creates and activations with an `Idempotency-Key`, revokes)
 * and reads. Three times, the primary crashes (an immediate stop), the standby is promoted and the
 * proxy moves to it:
 *
 * 1. with synchronous replication: nothing acknowledged may be lost;
 * 2. with asynchronous replication (a new standby of the promoted node): writes may be lost, but
 *    only writes acknowledged after the last WAL the standby received; the test counts them;
 * 3. the same with a standby that has fallen behind (its replication link cut before the crash):
 *    every write acknowledged after the cut is lost, and nothing before it.
 *
 * In rounds 2 and 3 a lost revoke does not stay lost: a revoke answers only once its event is in
 * the stream, and the license service writes it back from there (EVENT_REPLAY_MS, 500 ms here).
 * Every revoke acknowledged before the crash must be back on the promoted standby.
 *
 * Every request must end 2xx, as a clean `503 unavailable` problem, as a `409` whose first attempt
 * is still in progress (retried after its `Retry-After`), or as a `404` for a license whose create
 * was lost. No process may exit, and the services must serve again on their own, without a restart. The time from the promotion to the first acknowledged write and to a load without
 * errors is measured and logged as one JSON line.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ApiClient,
  PlatformProcess,
  TcpProxy,
  apiKeyWithScopes,
  build,
  deleteNamespaceStreams,
  killAll,
  productWithKeyPair,
  startTcpProxy,
  testEnv,
  uniqueNamespace,
  waitFor,
} from '@licensing/shared/testing';
import { Outcome, send, sleep } from './support/load';
import { PostgresNode, ownedByPostgres } from './support/postgres-nodes';

const SERVICES = [
  'product-service',
  'license-service',
  'revocation-service',
  'analytics-service',
  'webhook-service',
];
const CLIENT_TIMEOUT_MS = 10_000;
/** Generous: six Node processes booting on a shared 2-core machine. */
const BOOT_TIMEOUT_MS = 180_000;
const WORKERS = 4;
/** A client retries a request answered 503 after this long (a write with the same Idempotency-Key)... */
const RETRY_MS = 200;
/** ...for at most this long; after that the write counts as never acknowledged. */
const RETRY_FOR_MS = 60_000;
/** The load before each crash. */
const STEADY_MS = 2_000;
/** How long a crash goes unnoticed before the standby is promoted (an operator's detection delay). */
const DETECTION_MS = 1_000;
/** The load runs without an error for this long before a round counts as recovered. */
const CLEAN_MS = 2_000;
/** Round 3: writes acknowledged after the replication link was cut, before the crash. */
const WRITES_BEHIND = 5;

type WriteKind = 'create' | 'revoke' | 'activate';

/** A write the API acknowledged. */
interface Write {
  kind: WriteKind;
  /** The license (create, revoke) or the activation (activate). */
  id: string;
  licenseId: string;
  /** When its first attempt was sent: it took effect no earlier. */
  sent: number;
  /** When the 2xx answer came: it took effect no later. */
  acked: number;
}

interface Attempt extends Outcome {
  licenseId?: string;
  write: boolean;
}

const isOk = (o: Outcome) => o.status !== undefined && o.status >= 200 && o.status < 300;
const isUnavailable = (o: Outcome) => o.status === 503 && o.problem === true && o.code === 'unavailable';
/**
 * Worth the same request again, with the same key: a clean 503, or a 409 saying that the first
 * attempt is still in progress (with `Retry-After`). After a failover that first attempt's claim can
 * outlive its 503 for a moment: the gateway gives the key back once the new primary takes writes.
 */
const isInProgress = (o: Outcome) => o.status === 409 && o.code === 'conflict' && o.retryAfter !== undefined;
const isRetryable = (o: Outcome) => isUnavailable(o) || isInProgress(o);
/** A 5xx, or no answer at all. */
const isFailure = (o: Outcome) => o.status === undefined || o.status >= 500;
const end = (o: Outcome) => o.sent + o.ms;

describe('PostgreSQL failover under load: the primary crashes, its standby is promoted', () => {
  const namespace = uniqueNamespace('pgfo');
  const dir = ownedByPostgres(mkdtempSync(path.join(tmpdir(), 'pg-failover-')));
  const processes: PlatformProcess[] = [];
  const nodes: PostgresNode[] = [];
  const proxies: TcpProxy[] = [];

  afterAll(async () => {
    await killAll(processes);
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
    await deleteNamespaceStreams(namespace);
  });

  it('loses nothing acknowledged with synchronous replication, only the unreplicated tail with asynchronous, and recovers without a restart', async () => {
    build();
    const started = Date.now();
    const node = async (create: Promise<PostgresNode>) => {
      const created = await create;
      nodes.push(created);
      await created.start();
      return created;
    };
    const proxyTo = async (target: PostgresNode) => {
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: target.port });
      proxies.push(proxy);
      return proxy;
    };
    const streaming = (primary: PostgresNode, standby: PostgresNode, syncState: string) =>
      waitFor(
        async () =>
          (
            await primary.query<{ sync_state: string }>(
              "SELECT sync_state FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'",
              [standby.name],
            )
          )[0]?.sync_state === syncState,
        { timeoutMs: 30_000, what: `${standby.name} to stream from ${primary.name} (${syncState})` },
      );

    // A primary and its synchronous standby. The standby is copied before the primary names it
    // synchronous: promoted, it must not wait for a standby of its own.
    const a = await node(PostgresNode.init(dir, 'a'));
    const b = await node(a.standby('b'));
    await a.query("ALTER SYSTEM SET synchronous_standby_names = 'b'");
    await a.query("ALTER SYSTEM SET synchronous_commit = 'on'");
    await a.query('SELECT pg_reload_conf()');
    await streaming(a, b, 'sync');
    const endpoint = await proxyTo(a);

    const env = testEnv(namespace, {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${endpoint.port}/licensing`,
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '500',
      // The license service writes back license events the promoted standby lacks (a revoke).
      EVENT_REPLAY_MS: '500',
    });
    for (const service of SERVICES) processes.push(await PlatformProcess.create(service, service, env, dir));
    const gateway = await PlatformProcess.create(
      'gateway',
      'gateway',
      { ...env, BOOTSTRAP_DEFAULT_ORG: 'true' },
      dir,
    );
    await Promise.all(processes.map((service) => service.start(BOOT_TIMEOUT_MS)));
    processes.push(gateway);
    await gateway.start(BOOT_TIMEOUT_MS);
    const booted = Date.now();

    const adminKey = /export LICENSING_API_KEY=(lk_\S+)/.exec(readFileSync(gateway.log, 'utf8'))![1]!;
    const admin = new ApiClient(gateway.url, adminKey);
    const { product } = await productWithKeyPair(admin, { activation_heartbeat_interval: null });
    const { key: client } = await apiKeyWithScopes(admin, ['client']);

    // The load: what the API acknowledged, and every attempt's answer.
    const writes: Write[] = [];
    const attempts: Attempt[] = [];
    /** When each attempt still waiting for its answer was sent. */
    const inFlight = new Set<{ sent: number }>();
    const revocable: string[] = [];
    const activatable: string[] = [];
    let loading = true;
    let turn = 0;

    /** One operation, retried on 503 as a client would (the same Idempotency-Key each time). */
    async function perform(
      kind: WriteKind | 'read',
      licenseId: string | undefined,
      request: { method: string; path: string; key: string; body?: unknown; idempotencyKey?: string },
    ): Promise<Outcome | undefined> {
      const sent = Date.now();
      for (;;) {
        const flight = { sent: Date.now() };
        inFlight.add(flight);
        const outcome = await send(
          {
            kind,
            method: request.method,
            url: `${gateway.url}${request.path}`,
            target: gateway.label,
            headers: {
              authorization: `Bearer ${request.key}`,
              ...(request.idempotencyKey ? { 'idempotency-key': request.idempotencyKey } : {}),
            },
            body: request.body,
          },
          CLIENT_TIMEOUT_MS,
        );
        inFlight.delete(flight);
        attempts.push({ ...outcome, licenseId, write: kind !== 'read' });
        if (isOk(outcome)) {
          if (kind !== 'read') {
            // A revoke is of its license; a create or an activation answers the new resource.
            const id = kind === 'revoke' ? licenseId! : (outcome.body as { id: string }).id;
            writes.push({ kind, id, licenseId: licenseId ?? id, sent, acked: Date.now() });
          }
          return outcome;
        }
        if (!isRetryable(outcome) || Date.now() - sent > RETRY_FOR_MS) return undefined;
        await sleep(isInProgress(outcome) ? outcome.retryAfter! * 1_000 : RETRY_MS);
      }
    }

    const create = async () => {
      const answer = await perform('create', undefined, {
        method: 'POST',
        path: '/api/v1/licenses',
        key: adminKey,
        body: { product_id: product.id, max_seats: 5 },
        idempotencyKey: randomUUID(),
      });
      const id = (answer?.body as { id?: string } | undefined)?.id;
      if (id) (revocable.length <= activatable.length ? revocable : activatable).push(id);
    };
    const revoke = async () => {
      const licenseId = revocable.shift();
      if (!licenseId) return create();
      await perform('revoke', licenseId, {
        method: 'DELETE',
        path: `/api/v1/licenses/${licenseId}`,
        key: adminKey,
      });
    };
    const activate = async () => {
      const licenseId = activatable.shift();
      if (!licenseId) return create();
      await perform('activate', licenseId, {
        method: 'POST',
        path: '/api/v1/activations',
        key: client.key,
        body: { license_id: licenseId, fingerprint: `machine-${randomUUID()}` },
        idempotencyKey: randomUUID(),
      });
    };
    const read = async () => {
      const created = writes.filter((w) => w.kind === 'create');
      if (created.length === 0) return create();
      const licenseId = created[Math.floor(Math.random() * created.length)]!.id;
      await perform('read', licenseId, {
        method: 'GET',
        path: `/api/v1/licenses/${licenseId}`,
        key: adminKey,
      });
    };
    const mix = [create, read, revoke, create, activate, read];
    const loops = Array.from({ length: WORKERS }, async () => {
      while (loading) await mix[turn++ % mix.length]!();
    });

    /** The end of the last request that failed (a 404 of a lost license is an answer, not a failure). */
    const lastFailure = () => attempts.reduce((last, o) => (isFailure(o) ? Math.max(last, end(o)) : last), 0);
    const okPerSecond = (from: number, to: number) =>
      Math.round(
        (attempts.filter((o) => isOk(o) && end(o) >= from && end(o) < to).length * 1_000) / (to - from),
      );

    /**
     * Crashes `primary`, promotes `standby` after the detection delay, moves the endpoint to it,
     * and waits until the load has run without an error for CLEAN_MS. `beforeCrash` runs after the
     * steady load, just before the crash. Measured from the promotion: the first write
     * acknowledged, and the end of the last request that failed (from then on, all succeeded).
     */
    async function failOver(primary: PostgresNode, standby: PostgresNode, beforeCrash?: () => Promise<void>) {
      await sleep(STEADY_MS);
      await beforeCrash?.();
      const crashed = Date.now();
      await primary.crash();
      // Nothing commits on it from here on; what it acknowledged until here may be lost.
      const down = Date.now();
      await sleep(DETECTION_MS);
      const promoted = Date.now();
      await standby.promote();
      endpoint.retarget({ host: '127.0.0.1', port: standby.port });
      const retargeted = Date.now();
      const recovered = await waitFor(
        () => {
          const from = Math.max(lastFailure(), retargeted);
          const waiting = [...inFlight].some((flight) => flight.sent <= from);
          const since = attempts.filter((o) => o.sent > from && isOk(o));
          const clean = !waiting && Date.now() - from >= CLEAN_MS && since.some((o) => o.write);
          return clean && since.length >= 10 && from;
        },
        { timeoutMs: 90_000, intervalMs: 100, what: 'the load to run without errors again' },
      );
      const firstWrite = Math.min(
        ...attempts.filter((o) => o.write && isOk(o) && end(o) >= promoted).map(end),
      );
      return {
        crashed,
        down,
        measured: {
          promoteMs: retargeted - promoted,
          firstWriteMs: firstWrite - promoted,
          recoveredMs: recovered - promoted,
          failedRequests: attempts.filter((o) => end(o) > crashed && isFailure(o)).length,
          okPerSecondBefore: okPerSecond(crashed - STEADY_MS, crashed),
          okPerSecondAfter: okPerSecond(recovered, Date.now()),
        },
      };
    }

    const key = (w: Write) => `${w.kind}:${w.id}`;
    /** The acknowledged writes `holder` (the primary now) does not hold. */
    async function lostOn(holder: PostgresNode, acknowledged: Write[]): Promise<Write[]> {
      const held = async (kind: WriteKind, text: string) => {
        const ids = acknowledged.filter((w) => w.kind === kind).map((w) => w.id);
        const rows = await holder.query<{ id: string }>(text, [ids], 'licensing');
        return rows.map((row) => `${kind}:${row.id}`);
      };
      const found = new Set([
        ...(await held('create', 'SELECT id FROM license.licenses WHERE id = ANY($1)')),
        ...(await held(
          'revoke',
          'SELECT id FROM license.licenses WHERE id = ANY($1) AND revoked_at IS NOT NULL',
        )),
        ...(await held('activate', 'SELECT id FROM license.activations WHERE id = ANY($1)')),
      ]);
      return acknowledged.filter((w) => !found.has(key(w)));
    }
    /**
     * What an asynchronous standby can lose: writes acknowledged before the crash, and only the
     * tail of them. It holds a prefix of the primary's WAL, so a write it lacks committed after
     * every write it holds, and was acknowledged after each of those had been sent.
     */
    function expectTail(lost: Write[], down: number, earlier: Set<string>) {
      // Revokes are left out: the license service writes lost ones back from their events.
      const lostKeys = new Set(lost.map(key));
      const kept = writes.filter(
        (w) => w.kind !== 'revoke' && w.acked < down && !lostKeys.has(key(w)) && !earlier.has(key(w)),
      );
      const lastKeptSent = Math.max(...kept.map((w) => w.sent));
      for (const write of lost.filter((w) => w.kind !== 'revoke')) {
        expect(write.sent).toBeLessThan(down);
        expect(write.acked).toBeGreaterThan(lastKeptSent);
      }
    }
    /** Revokes acknowledged before the crash, of licenses `holder` has: none may stay lost. */
    async function expectRevokesWrittenBack(holder: PostgresNode, down: number): Promise<number> {
      // A revoke answers once its event is in the stream, so each acknowledged one comes back.
      const published = writes.filter((w) => w.kind === 'revoke' && w.acked < down);
      const ids = published.map((w) => w.id);
      const present = async () =>
        (
          await holder.query<{ id: string }>(
            'SELECT id FROM license.licenses WHERE id = ANY($1) AND revoked_at IS NULL',
            [ids],
            'licensing',
          )
        ).map((row) => row.id);
      const before = (await present()).length;
      await waitFor(async () => (await present()).length === 0, {
        timeoutMs: 15_000,
        what: 'every acknowledged revoke to be written back to the promoted standby',
      });
      return before;
    }

    let round1: Awaited<ReturnType<typeof failOver>>;
    let round2: Awaited<ReturnType<typeof failOver>>;
    let round3: Awaited<ReturnType<typeof failOver>>;
    let lost2: Write[];
    let lost3: Write[];
    let writtenBack2 = 0;
    let writtenBack3 = 0;
    let cut = 0;
    let d: PostgresNode;
    try {
      // Round 1: synchronous replication. Nothing acknowledged is lost.
      round1 = await failOver(a, b);
      expect(await lostOn(b, writes.slice())).toEqual([]);

      // Round 2: asynchronous replication, to a new standby of b (b names no synchronous standby).
      const c = await node(b.standby('c'));
      await streaming(b, c, 'async');
      round2 = await failOver(b, c);
      writtenBack2 = await expectRevokesWrittenBack(c, round2.down);
      lost2 = await lostOn(
        c,
        writes.filter((w) => w.sent < round2.down),
      );

      // Round 3: asynchronous, the standby fallen behind: its link to the primary is cut a few
      // acknowledged writes before the crash.
      const link = await proxyTo(c);
      d = await node(c.standby('d', link.port));
      await streaming(c, d, 'async');
      round3 = await failOver(c, d, async () => {
        await link.cut();
        cut = Date.now();
        await waitFor(() => writes.filter((w) => w.sent > cut).length >= WRITES_BEHIND, {
          timeoutMs: 30_000,
          what: 'writes acknowledged after the cut',
        });
      });
    } finally {
      loading = false;
      await Promise.all(loops);
    }

    expectTail(lost2!, round2!.down, new Set());
    writtenBack3 = await expectRevokesWrittenBack(d!, round3!.down);
    lost3 = (
      await lostOn(
        d!,
        writes.filter((w) => w.sent < round3!.down),
      )
    ).filter((w) => !lost2!.some((earlier) => key(earlier) === key(w)));
    expectTail(lost3, round3!.down, new Set(lost2!.map(key)));
    // Nothing that committed after the cut reached d: every create and activation sent since and
    // acknowledged before the crash is lost (revokes come back from their events). One sent before
    // the crash and answered after it may be lost too: it committed on c, and its answer was slow.
    // And nothing else is missing on d.
    const afterCut = writes.filter((w) => w.sent > cut && w.acked < round3!.down);
    expect(afterCut.length).toBeGreaterThanOrEqual(WRITES_BEHIND);
    const lostAfterCut = new Set(lost3.filter((w) => w.sent > cut && w.kind !== 'revoke').map(key));
    expect(afterCut.filter((w) => w.kind !== 'revoke' && !lostAfterCut.has(key(w)))).toEqual([]);
    expect((await lostOn(d!, writes.slice())).map(key).sort()).toEqual([...lost2!, ...lost3].map(key).sort());

    // Every answer was a 2xx, a clean 503 or an in-progress 409; a 404 only for a license whose
    // create was lost.
    const lostLicenses = new Set([...lost2!, ...lost3].filter((w) => w.kind === 'create').map((w) => w.id));
    const unclean = attempts.filter(
      (o) => !isOk(o) && !isRetryable(o) && !(o.status === 404 && lostLicenses.has(o.licenseId ?? '')),
    );
    expect(
      unclean.map(({ kind, status, code, failure, body }) => ({ kind, status, code, failure, body })),
    ).toEqual([]);
    for (const proc of processes)
      expect({ [proc.label]: proc.unexpectedExits }).toEqual({ [proc.label]: [] });

    const count = (kind: WriteKind, list: Write[]) => list.filter((w) => w.kind === kind).length;
    const tally = (list: Write[]) => ({
      create: count('create', list),
      revoke: count('revoke', list),
      activate: count('activate', list),
    });
    console.log(
      JSON.stringify({
        pgFailover: {
          bootMs: booted - started,
          requests: attempts.length,
          acknowledged: tally(writes),
          synchronous: { ...round1!.measured, lost: 0 },
          asynchronous: { ...round2!.measured, lost: tally(lost2!), revokesBehindAtCheck: writtenBack2 },
          asynchronousBehind: {
            ...round3!.measured,
            cutBeforeCrashMs: round3!.crashed - cut,
            acknowledgedAfterCut: afterCut.length,
            lost: tally(lost3),
            revokesBehindAtCheck: writtenBack3,
          },
          totalMs: Date.now() - started,
        },
      }),
    );
  }, 300_000);
});
