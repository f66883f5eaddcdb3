import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import {
  TEST_DATABASE_NAME,
  waitFor,
  OwnServer,
  startOwnNats,
  startOwnRedis,
} from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, productWithKeyPair } from './support/fixtures';

/**
 * Faults under load: a steady mixed load (creates, revokes, activations, check-revocation, syncs)
 * runs through the gateway while Redis and NATS are killed and restarted (once from a snapshot
 * older than some revocations), the services' PostgreSQL connections are terminated, and every
 * service is stopped and started again. Every request and its answer is recorded; afterwards the
 * answers, and what the platform remembers of the acknowledged ones, are checked.
 */

/** A request without an answer by then is a hang (the bus timeout below is far shorter). */
const REQUEST_TIMEOUT_MS = 10_000;
/** Short, so a request that lost its service gives up (503) quickly and the run stays short. */
const BUS_TIMEOUT_MS = 2_000;
const WORKERS = 4;
/** Time between one fault's recovery and the next fault, and how long a server stays down. */
const PAUSE_MS = 2_500;
const DOWN_MS = 1_000;
/** The platform serves normally again this long after the last restart at the latest. */
const RECOVERY_MS = 10_000;
const SEATS = 3;

type Op = 'create' | 'revoke' | 'activate' | 'check' | 'sync';
/** The operations a worker cycles through: reads and syncs weigh most, as in production. */
const CYCLE: Op[] = ['create', 'check', 'sync', 'activate', 'create', 'sync', 'check', 'revoke', 'sync'];

interface Answer {
  status: number; // 0: no answer within REQUEST_TIMEOUT_MS, or the connection failed
  contentType: string;
  /** The Retry-After header, as sent. */
  retryAfter?: string;
  body: any;
  error?: string;
}

interface Call extends Answer {
  op: Op;
  started: number;
  ended: number;
  /** The license the call was about (create: the created one). */
  licenseId?: string;
  /** check: the serials asked about. */
  serials?: string[];
  /** sync: its report id and the fingerprint that identifies it. */
  reportId?: string;
  fingerprint?: string;
  /** The fault under way (or last healed) when the request was sent. */
  during: string;
}

interface CreatedLicense {
  id: string;
  serial: string;
  blob: string;
  /** When its revoke was answered 200, if it was. */
  revokedAt?: number;
  revoking?: boolean;
}

interface Fault {
  name: string;
  /** When the fault began, and when the server or service was back (restart finished). */
  began: number;
  restored: number;
  /** Time from `restored` until every kind of request was answered again (anything but a 503). */
  recoveryMs?: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isOk = (status: number) => status >= 200 && status < 300;

/** `fn` over every item, `concurrency` at a time. */
async function inBatches<T, R>(items: T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += concurrency) {
    results.push(...(await Promise.all(items.slice(i, i + concurrency).map(fn))));
  }
  return results;
}
const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)]!;

describe('faults under load', () => {
  let redisServer: OwnServer;
  let natsServer: OwnServer;
  let probe: Redis;
  let stack: TestStack;
  let org: TestOrganization;
  let clientKey: string;
  let productId: string;

  const calls: Call[] = [];
  const licenses: CreatedLicense[] = [];
  const faults: Fault[] = [];
  let lastRestart = 0;
  let phase = 'warm-up';
  let recoveredAfterLastRestart: number | undefined;

  /** One HTTP request, bounded in time; the answer is recorded whatever it is. */
  async function send(key: string, method: string, path: string, body?: unknown): Promise<Answer> {
    try {
      const response = await fetch(`${stack.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // Not JSON: kept as text, and the clean-answer check below will say so.
      }
      return {
        status: response.status,
        contentType: response.headers.get('content-type') ?? '',
        retryAfter: response.headers.get('retry-after') ?? undefined,
        body: parsed,
      };
    } catch (error) {
      return { status: 0, contentType: '', body: undefined, error: String(error) };
    }
  }

  async function record(
    op: Op,
    key: string,
    method: string,
    path: string,
    body: unknown,
    about: Partial<Call> = {},
  ): Promise<Call> {
    const started = Date.now();
    const during = phase;
    const answer = await send(key, method, path, body);
    const call: Call = { op, started, ended: Date.now(), during, ...answer, ...about };
    calls.push(call);
    return call;
  }

  const activeLicenses = () => licenses.filter((l) => l.revokedAt === undefined && !l.revoking);

  /** One request of the given kind, against the licenses created so far. */
  /** A usage report with an id and a fingerprint of its own, so that analytics can be checked to count it once. */
  function sync(license: CreatedLicense): Promise<Call> {
    const reportId = randomUUID();
    const fingerprint = `report-${reportId}`;
    return record(
      'sync',
      clientKey,
      'POST',
      '/api/v1/licenses/sync',
      {
        license_serial: license.serial,
        hardware_fingerprint: fingerprint,
        app_version: '2.4.1',
        seats_in_use: 1,
        report_id: reportId,
      },
      { licenseId: license.id, reportId, fingerprint },
    );
  }

  /** Revokes a license (recorded like the load); while it runs, the load leaves that license alone. */
  async function revoke(license: CreatedLicense): Promise<Call> {
    license.revoking = true;
    const call = await record('revoke', org.adminKey, 'DELETE', `/api/v1/licenses/${license.id}`, undefined, {
      licenseId: license.id,
    });
    license.revoking = false;
    if (call.status === 200) license.revokedAt = call.ended;
    return call;
  }

  async function operate(op: Op): Promise<Call> {
    switch (op) {
      case 'create': {
        const call = await record('create', org.adminKey, 'POST', '/api/v1/licenses', {
          product_id: productId,
          license_type: 'floating',
          max_seats: SEATS,
        });
        if (call.status === 201) {
          call.licenseId = call.body.id;
          licenses.push({ id: call.body.id, serial: call.body.serial, blob: call.body.license_blob });
        }
        return call;
      }
      case 'revoke': {
        // Among the recent licenses, which the checks and syncs ask about; a few stay active.
        const candidates = activeLicenses().slice(-20);
        if (candidates.length < 5) return operate('create');
        return revoke(pick(candidates));
      }
      case 'activate': {
        const license = pick(licenses);
        return record(
          'activate',
          clientKey,
          'POST',
          '/api/v1/activations',
          { license_key: license.serial, fingerprint: `machine-${randomUUID()}` },
          { licenseId: license.id },
        );
      }
      case 'check': {
        // The recent licenses, among them the ones just revoked: what a stale cache would get wrong.
        const recent = licenses.slice(-40);
        const serials = [...new Set(Array.from({ length: 10 }, () => pick(recent).serial))];
        return record(
          'check',
          clientKey,
          'POST',
          '/api/v1/licenses/check-revocation',
          { serials },
          { serials },
        );
      }
      case 'sync':
        return sync(pick(licenses.slice(-40)));
    }
  }

  /** `WORKERS` loops of requests until `stop` resolves. */
  async function load(stop: Promise<unknown>): Promise<void> {
    let stopped = false;
    void stop.then(() => (stopped = true));
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, worker) => {
        for (let i = worker; !stopped; i += 1) await operate(CYCLE[i % CYCLE.length]!);
      }),
    );
  }

  /**
   * Runs a fault (`down` breaks something, `up` repairs it after DOWN_MS; a fault that needs no
   * repair has no `up`) and notes when it began and when it was over.
   */
  async function fault(
    name: string,
    down: () => Promise<unknown>,
    up?: () => Promise<unknown>,
  ): Promise<void> {
    const began = Date.now();
    phase = name;
    await down();
    if (up) {
      await pause(DOWN_MS);
      await up();
    }
    const restored = Date.now();
    faults.push({ name, began, restored });
    lastRestart = restored;
  }

  /** Cuts every PostgreSQL connection of this test's database: the services' and the gateway's. */
  async function terminateBackends(): Promise<void> {
    const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await admin.connect();
    try {
      const terminated = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [TEST_DATABASE_NAME],
      );
      expect(terminated.rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
  }

  /** A create, a revoke, a check and a sync in a row (recorded like the load), all answered as usual. */
  async function servesNormally(): Promise<boolean> {
    const created = await operate('create');
    if (created.status !== 201) return false;
    const license = licenses.find((l) => l.id === created.licenseId)!;
    const revoked = await revoke(license);
    if (revoked.status !== 200) return false;
    const checked = await record(
      'check',
      clientKey,
      'POST',
      '/api/v1/licenses/check-revocation',
      { serials: [license.serial] },
      { serials: [license.serial] },
    );
    if (checked.status !== 200 || checked.body.results[0].status !== 'revoked') return false;
    const synced = await sync(license);
    return synced.status === 200 && synced.body.status === 'revoked';
  }

  /** Every fault in turn, with a pause between each; resolves once the platform serves normally again. */
  async function faultsInTurn(): Promise<void> {
    const steps: Array<() => Promise<void>> = [
      // 1. Redis: a crash, and a restart with an empty cache...
      () =>
        fault(
          'redis killed',
          () => redisServer.kill(),
          () => redisServer.start(),
        ),
      // ...and one from a snapshot taken before some revocations.
      async () => {
        const saved = Date.now();
        await waitFor(async () => (await probe.save()) === 'OK', { what: 'a Redis snapshot' });
        await waitFor(() => licenses.filter((l) => (l.revokedAt ?? 0) > saved).length >= 3, {
          what: 'revocations after the snapshot',
          timeoutMs: 15_000,
        });
        await fault(
          'redis killed, restarted from an older snapshot',
          () => redisServer.kill(),
          () => redisServer.start(),
        );
      },
      // 2. NATS (its JetStream store survives in its data directory).
      () =>
        fault(
          'nats killed',
          () => natsServer.kill(),
          () => natsServer.start(),
        ),
      // 3. PostgreSQL: every connection of the services and the gateway cut at once, twice.
      () => fault('postgres backends terminated', terminateBackends),
      () => fault('postgres backends terminated again', terminateBackends),
      // 4. Each service stopped and started again, as a crash or a deploy would.
      ...['product-service', 'license-service', 'revocation-service', 'analytics-service'].map(
        (service) => () =>
          fault(
            `${service} stopped`,
            () => stack.stopService(service),
            () => stack.startService(service),
          ),
      ),
    ];
    await pause(PAUSE_MS);
    for (const [index, step] of steps.entries()) {
      if (index > 0) await pause(PAUSE_MS);
      await step();
    }
    phase = 'after the last restart';
    await waitFor(servesNormally, { what: 'the platform to serve normally', timeoutMs: RECOVERY_MS });
    recoveredAfterLastRestart = Date.now() - lastRestart;
  }

  beforeAll(async () => {
    [redisServer, natsServer] = await Promise.all([startOwnRedis(), startOwnNats()]);
    probe = new Redis(redisServer.url, { retryStrategy: () => 100, maxRetriesPerRequest: 1 });
    probe.on('error', () => undefined);
    stack = await startStack({
      env: { REDIS_URL: redisServer.url, NATS_URL: natsServer.url, BUS_TIMEOUT_MS: String(BUS_TIMEOUT_MS) },
    });
    org = await stack.newOrganization();
    ({
      key: { key: clientKey },
    } = await apiKeyWithScopes(org.api, ['client']));
    ({
      product: { id: productId },
    } = await productWithKeyPair(org.api));
    // A few licenses to start with, so every kind of request has something to work on.
    for (let i = 0; i < 10; i += 1) await operate('create');
    expect(licenses).toHaveLength(10);
  });
  afterAll(async () => {
    await stack?.close();
    probe?.disconnect();
    await redisServer?.dispose();
    await natsServer?.dispose();
  });

  it('runs a mixed load through Redis, NATS, PostgreSQL and service faults', async () => {
    const done = faultsInTurn();
    await load(done.catch(() => undefined));
    await done;

    // How long each fault took to heal: until every kind of request was answered again, as it is
    // when nothing is wrong (a 409 seat_limit_reached is a normal answer; a 503 is not).
    for (const [index, f] of faults.entries()) {
      const next = faults[index + 1]?.began ?? Infinity;
      const healed = (['create', 'revoke', 'activate', 'check', 'sync'] as Op[]).map((op) => {
        const first = calls.find(
          (c) =>
            c.op === op && c.started >= f.restored && c.started < next && c.status !== 503 && c.status !== 0,
        );
        return first ? first.ended - f.restored : undefined;
      });
      if (healed.every((ms) => ms !== undefined)) f.recoveryMs = Math.max(...(healed as number[]));
    }
    // The load stops once the probe after the last restart succeeds: that fault healed when it did.
    faults.at(-1)!.recoveryMs = recoveredAfterLastRestart;
    const count = (of: Call[]) => {
      const counts: Record<string, number> = {};
      for (const c of of) counts[`${c.op} ${c.status}`] = (counts[`${c.op} ${c.status}`] ?? 0) + 1;
      return counts;
    };
    // What the run measured, for whoever reads the test output.
    process.stdout.write(
      JSON.stringify(
        {
          requests: calls.length,
          seconds: Math.round((calls.at(-1)!.ended - calls[0]!.started) / 1000),
          by_status: count(calls),
          slowest_ms: Math.max(...calls.map((c) => c.ended - c.started)),
          licenses_created: licenses.length,
          revoked: licenses.filter((l) => l.revokedAt !== undefined).length,
          faults: faults.map((f) => ({
            fault: f.name,
            down_ms: f.restored - f.began,
            recovery_ms: f.recoveryMs,
            unavailable: count(
              calls.filter((c) => c.during === f.name && (c.status >= 500 || c.status === 0)),
            ),
          })),
          serving_normally_after_last_restart_ms: recoveredAfterLastRestart,
        },
        null,
        1,
      ) + '\n',
    );

    expect(calls.length).toBeGreaterThan(500);
    expect(recoveredAfterLastRestart).toBeLessThan(RECOVERY_MS);
    // Every fault that could be measured (all kinds of request answered in its window) healed in time.
    for (const f of faults)
      expect({ fault: f.name, healed: (f.recoveryMs ?? 0) < RECOVERY_MS }).toEqual({
        fault: f.name,
        healed: true,
      });
  }, 180_000);

  it('answers every request with a 2xx or a clean problem, never a 500 and never a hang; every 503 says when to retry', () => {
    expect(calls.length).toBeGreaterThan(0);
    const unclean = calls.filter((c) => {
      if (c.status >= 200 && c.status < 300) return false;
      if (c.status < 400 || (c.status >= 500 && c.status !== 503)) return true;
      if (!/application\/problem\+json/.test(c.contentType)) return true;
      return c.status === 503 && (c.body?.code !== 'unavailable' || !(Number(c.retryAfter) >= 1));
    });
    expect(
      unclean.map(({ op, status, body, error, during, retryAfter }) => ({
        op,
        status,
        body,
        error,
        during,
        retryAfter,
      })),
    ).toEqual([]);
  });

  it('keeps every license whose create was answered 201', async () => {
    expect(licenses.length).toBeGreaterThan(10);
    const missing = await inBatches(licenses, 8, async (license) => {
      const found = await send(org.adminKey, 'GET', `/api/v1/licenses/${license.id}`);
      return found.status === 200 && found.body.serial === license.serial ? undefined : { license, found };
    });
    expect(missing.filter(Boolean)).toEqual([]);
  }, 90_000);

  it('never answered a serial as active once its revoke had been answered 200', () => {
    const revokedAt = new Map(licenses.filter((l) => l.revokedAt).map((l) => [l.serial, l.revokedAt!]));
    const revokedIdAt = new Map(licenses.filter((l) => l.revokedAt).map((l) => [l.id, l.revokedAt!]));
    const revokedBefore = (call: Call, at: number | undefined) => at !== undefined && at < call.started;
    const stale = calls.filter((c) => {
      if (c.op === 'check' && c.status === 200) {
        return c.body.results.some(
          (r: { serial: string; status: string }) =>
            revokedBefore(c, revokedAt.get(r.serial)) && r.status !== 'revoked',
        );
      }
      const at = c.licenseId === undefined ? undefined : revokedIdAt.get(c.licenseId);
      if (c.op === 'sync' && c.status === 200) return revokedBefore(c, at) && c.body.status !== 'revoked';
      // A revoked license gets no seat.
      if (c.op === 'activate') return revokedBefore(c, at) && isOk(c.status);
      return false;
    });
    expect(calls.filter((c) => c.op === 'check' && c.status === 200).length).toBeGreaterThan(50);
    expect(
      stale.map(({ op, status, body, during, started }) => ({ op, status, body, during, started })),
    ).toEqual([]);
  });

  it('reports every revocation answered 200 as revoked by check-revocation, verify and sync', async () => {
    const revoked = licenses.filter((l) => l.revokedAt !== undefined);
    expect(revoked.length).toBeGreaterThan(10);

    for (let i = 0; i < revoked.length; i += 100) {
      const serials = revoked.slice(i, i + 100).map((l) => l.serial);
      const checked = await send(clientKey, 'POST', '/api/v1/licenses/check-revocation', { serials });
      expect(checked.status).toBe(200);
      expect(checked.body.results.filter((r: { status: string }) => r.status !== 'revoked')).toEqual([]);
    }

    const verified = await inBatches(revoked, 8, async (license) => {
      const answer = await send(clientKey, 'POST', '/api/v1/licenses/verify', {
        product_id: productId,
        license_blob: license.blob,
      });
      const codes: string[] = (answer.body?.errors ?? []).map((e: { code: string }) => e.code);
      return answer.status === 200 && answer.body.valid === false && codes.includes('revoked')
        ? undefined
        : { serial: license.serial, status: answer.status, body: answer.body };
    });
    expect(verified.filter(Boolean)).toEqual([]);

    // Each of these syncs is a report like any other: it is recorded, and counted below.
    const synced = await inBatches(revoked, 8, async (license) => {
      const call = await sync(license);
      return call.status === 200 && call.body.status === 'revoked'
        ? undefined
        : { serial: license.serial, status: call.status, body: call.body };
    });
    expect(synced.filter(Boolean)).toEqual([]);
  }, 90_000);

  it('counts every sync answered 200 exactly once in analytics', async () => {
    const syncs = calls.filter((c) => c.op === 'sync');
    const acknowledged = syncs.filter((c) => c.status === 200);
    expect(acknowledged.length).toBeGreaterThan(100);
    const sent = new Set(syncs.map((c) => c.fingerprint));

    // Cheap first: the organization's total reaches the acknowledged count (reports answered 503
    // may have been stored too, so it may exceed it).
    const range = `from=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}&to=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`;
    await waitFor(
      async () => {
        const usage = await send(org.adminKey, 'GET', `/api/v1/analytics/usage?interval=day&${range}`);
        const total = (usage.body?.buckets ?? []).reduce(
          (sum: number, b: { syncs: number }) => sum + b.syncs,
          0,
        );
        return total >= acknowledged.length;
      },
      { what: `${acknowledged.length} syncs counted`, timeoutMs: 30_000, intervalMs: 250 },
    );

    // Then per license: every acknowledged report's fingerprint is there, each report one row.
    const byLicense = new Map<string, Set<string>>();
    for (const c of acknowledged) {
      const set = byLicense.get(c.licenseId!) ?? new Set<string>();
      set.add(c.fingerprint!);
      byLicense.set(c.licenseId!, set);
    }
    const usageOf = async (licenseId: string) => {
      const fingerprints: string[] = [];
      let syncsCounted = 0;
      for (let page = 1; page <= 10; page += 1) {
        const usage = await send(
          org.adminKey,
          'GET',
          `/api/v1/licenses/${licenseId}/usage?per_page=100&page=${page}`,
        );
        expect(usage.status).toBe(200);
        syncsCounted = usage.body.syncs;
        fingerprints.push(...usage.body.fingerprints.map((f: { fingerprint: string }) => f.fingerprint));
        if (fingerprints.length >= usage.body.total) break;
      }
      return { syncs: syncsCounted, fingerprints };
    };
    const wrong = await inBatches([...byLicense.entries()], 8, async ([licenseId, expected]) => {
      const usage = await waitFor(
        async () => {
          const now = await usageOf(licenseId);
          return [...expected].every((f) => now.fingerprints.includes(f)) && now;
        },
        // The total above may have been reached by reports answered 503 and stored anyway, while
        // analytics still drains the backlog of its own outage: on a loaded machine that takes a while.
        { what: `the syncs of license ${licenseId}`, timeoutMs: 30_000, intervalMs: 250 },
      );
      const foreign = usage.fingerprints.filter((f) => !sent.has(f));
      // One row per report: as many syncs as distinct reports (each report has its own fingerprint).
      return usage.syncs === usage.fingerprints.length && foreign.length === 0
        ? undefined
        : { licenseId, syncs: usage.syncs, reports: usage.fingerprints.length, foreign };
    });
    expect(wrong.filter(Boolean)).toEqual([]);
  }, 90_000);
});
