// The soak's traffic: a steady mix of what clients and administrators send, each kind at a fixed
// rate. The load is open: a kind is sent at its rate whatever the answers take, with at most
// MAX_IN_FLIGHT of it outstanding (beyond that a request is skipped and counted), so that a
// platform that slows down shows as latency and skips, not as a lower rate.
//
// The data stays bounded: validate, sync, check-revocation and the GETs work on a fixed pool of
// licenses made before the load; each created license joins a ring of recent ones, which the
// activation cycles use, and the oldest is revoked when the ring is full. What grows is what
// should: a row per license created, an activation grant per cycle (kept 24 h), the sync reports
// and the audit log.
const { v7: timeOrderedUuid } = require('uuid');
const { apiClient, pool } = require('../lib/clients');

/** Requests (activation cycles for `activation`) per second at `--rate 1`. */
const RATES = {
  create: 1,
  revoke: 1,
  activation: 1,
  validate: 10,
  sync: 10,
  'check-revocation': 2,
  'get-license': 3,
  'list-licenses': 1,
  'get-product': 1,
};
/** What is counted: one row per request sent (an activation cycle is three). */
const KINDS = [
  'create',
  'revoke',
  'activate',
  'heartbeat',
  'deactivate',
  'validate',
  'sync',
  'check-revocation',
  'get-license',
  'list-licenses',
  'get-product',
];
const MAX_IN_FLIGHT = 32;
const TIMEOUT_MS = 10_000;
const TICK_MS = 50;
/** Latency histogram: one bucket per millisecond up to the timeout. */
const BUCKETS = TIMEOUT_MS + 1;

function percentileOfHistogram(histogram, count, p) {
  if (count === 0) return null;
  const rank = Math.ceil((p / 100) * count);
  let seen = 0;
  for (let ms = 0; ms < histogram.length; ms++) {
    seen += histogram[ms];
    if (seen >= rank) return ms;
  }
  return histogram.length - 1;
}

function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Counts per kind, for the whole run and for the interval since the last `takeInterval()`: answers
 * by status, requests with no answer (timeout, reset) by reason, skips, and latencies.
 */
function requestStats() {
  const total = {};
  let interval = {};
  const fresh = () => ({ requests: 0, ok: 0, http4xx: 0, http5xx: 0, failed: 0, skipped: 0, latencies: [] });
  for (const kind of KINDS) {
    total[kind] = {
      requests: 0,
      ok: 0,
      statuses: {},
      failures: {},
      skipped: 0,
      histogram: new Uint32Array(BUCKETS),
      examples: [],
    };
    interval[kind] = fresh();
  }
  return {
    answered(kind, status, ms, body) {
      const all = total[kind];
      const now = interval[kind];
      all.requests++;
      now.requests++;
      all.histogram[Math.min(BUCKETS - 1, Math.round(ms))]++;
      now.latencies.push(ms);
      if (status >= 200 && status < 300) {
        all.ok++;
        now.ok++;
        return;
      }
      all.statuses[status] = (all.statuses[status] ?? 0) + 1;
      if (status >= 500) now.http5xx++;
      else now.http4xx++;
      // A few answers of each kind kept whole, to say what went wrong.
      if (all.examples.length < 5) all.examples.push({ status, body: body?.slice(0, 500) });
    },
    failed(kind, reason, ms) {
      total[kind].requests++;
      total[kind].failures[reason] = (total[kind].failures[reason] ?? 0) + 1;
      total[kind].histogram[Math.min(BUCKETS - 1, Math.round(ms))]++;
      interval[kind].requests++;
      interval[kind].failed++;
    },
    skipped(kind) {
      total[kind].skipped++;
      interval[kind].skipped++;
    },
    /** The interval's counts per kind (p50 and p99 in ms), and a new interval. */
    takeInterval() {
      const taken = interval;
      interval = Object.fromEntries(KINDS.map((kind) => [kind, fresh()]));
      return Object.fromEntries(
        Object.entries(taken).map(([kind, { latencies, ...counts }]) => [
          kind,
          { ...counts, p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
        ]),
      );
    },
    /** The whole run per kind: counts, statuses other than 2xx, failures, p50 and p99 in ms. */
    summary(seconds) {
      return Object.fromEntries(
        KINDS.map((kind) => {
          const all = total[kind];
          const count = all.requests;
          const byClass = (from, to) =>
            Object.entries(all.statuses)
              .filter(([status]) => Number(status) >= from && Number(status) < to)
              .reduce((sum, [, n]) => sum + n, 0);
          return [
            kind,
            {
              requests: count,
              rps: Number((count / seconds).toFixed(2)),
              ok: all.ok,
              http4xx: byClass(400, 500),
              http5xx: byClass(500, 600),
              failed: Object.values(all.failures).reduce((sum, n) => sum + n, 0),
              skipped: all.skipped,
              statuses: all.statuses,
              failures: all.failures,
              p50: percentileOfHistogram(all.histogram, count, 50),
              p99: percentileOfHistogram(all.histogram, count, 99),
              examples: all.examples,
            },
          ];
        }),
      );
    },
  };
}

/** Why a request got no answer: `timeout`, `reset`, `refused`, or the error's code. */
function failureOf(error) {
  if (error?.name === 'TimeoutError') return 'timeout';
  const code = error?.cause?.code;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'reset';
  if (code === 'ECONNREFUSED') return 'refused';
  return code ?? error?.name ?? 'error';
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What the load works on, made through the API before it starts: a key pair, two products (the
 * fleet's, and one whose seats need heartbeats), a client and a read key, `poolSize` licenses, the
 * first `machines` of them activated on a machine each, and `ringSize` licenses to start the ring.
 */
async function prepare({ baseUrl, adminKey, unique, poolSize, ringSize, machines }) {
  const admin = apiClient(baseUrl, adminKey);
  const keyPair = await admin('POST', '/key-pairs', { name: 'soak' });
  const clientKey = (await admin('POST', '/api-keys', { name: 'soak client', scopes: ['client'] })).key;
  const readKey = (await admin('POST', '/api-keys', { name: 'soak read', scopes: ['read'] })).key;
  const fleet = await admin('POST', '/products', {
    name: 'Soak fleet',
    code: `soak-fleet-${unique}`,
    key_pair_id: keyPair.id,
    default_features: ['pro'],
  });
  const seats = await admin('POST', '/products', {
    name: 'Soak seats',
    code: `soak-seats-${unique}`,
    key_pair_id: keyPair.id,
    activation_heartbeat_interval: 3600,
    max_concurrent_activations: null,
  });
  const create = (product, i) =>
    admin('POST', '/licenses', {
      product_id: product,
      customer_email: `soak${i}@example.com`,
      valid_days: 365,
    });
  const licenses = await pool(poolSize, 8, async (i) => {
    const { id, serial } = await create(fleet.id, i);
    return { id, serial };
  });
  const client = apiClient(baseUrl, clientKey);
  const validating = await pool(Math.min(machines, poolSize), 8, async (i) => {
    const fingerprint = `soak-machine-${i}`;
    await client('POST', '/activations', { license_key: licenses[i].serial, fingerprint });
    return { key: licenses[i].serial, fingerprint };
  });
  const ring = await pool(ringSize, 8, async (i) => {
    const { id, serial } = await create(seats.id, `ring-${i}`);
    return { id, serial };
  });
  return { adminKey, clientKey, readKey, fleet, seats, licenses, machines: validating, ring, unique };
}

/**
 * Starts the load on `baseUrl` with the data `prepare` made; `rate` multiplies every kind's rate.
 * `stop()` stops sending and resolves once every request in flight has ended.
 */
function startLoad({ baseUrl, data, rate }) {
  const stats = requestStats();
  const headers = (key) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
  const inFlight = new Set();
  const outstanding = Object.fromEntries(Object.keys(RATES).map((name) => [name, 0]));

  /** One request, never throwing: its status (0 when no answer came) and parsed body. */
  async function call(kind, method, path, key, body) {
    const started = performance.now();
    try {
      const response = await fetch(`${baseUrl}/api/v1${path}`, {
        method,
        headers: headers(key),
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const text = await response.text();
      stats.answered(kind, response.status, performance.now() - started, response.ok ? undefined : text);
      let parsed;
      try {
        parsed = response.ok && text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: counted by its status all the same
      }
      return { status: response.status, body: parsed };
    } catch (error) {
      stats.failed(kind, failureOf(error), performance.now() - started);
      return { status: 0 };
    }
  }

  const ring = [...data.ring];
  const toRevoke = [];
  // The last revoked serials: check-revocation asks for some of them.
  const revoked = [];
  let sent = 0;
  let created = 0;
  let revokedCount = 0;
  let cursor = 0;
  let syncs = 0;
  // Licenses of the ring with an activation cycle in flight.
  const seated = new Set();
  const next = (list) => list[cursor++ % list.length];

  const actions = {
    async create() {
      const n = sent++;
      const answer = await call('create', 'POST', '/licenses', data.adminKey, {
        product_id: data.seats.id,
        customer_email: `soak-created-${n}@example.com`,
        valid_days: 365,
      });
      if (answer.status !== 201 || !answer.body) return;
      created++;
      ring.push({ id: answer.body.id, serial: answer.body.serial });
      if (ring.length > data.ring.length) toRevoke.push(ring.shift());
    },
    async revoke() {
      const license = toRevoke.shift();
      if (!license) return;
      const answer = await call('revoke', 'DELETE', `/licenses/${license.id}`, data.adminKey);
      if (answer.status === 200) {
        revokedCount++;
        revoked.push(license.serial);
        if (revoked.length > 200) revoked.shift();
      }
    },
    // A seat taken, kept alive once and given back, on one of the newer half of the ring: far from
    // being revoked, and each license activated only a few times (10 new seats a day at most). A
    // license has one seat: never two cycles on it at once.
    async activation() {
      const newer = ring.slice(Math.floor(ring.length / 2)).filter((l) => !seated.has(l.id));
      if (newer.length === 0) return;
      const license = newer[Math.floor(Math.random() * newer.length)];
      seated.add(license.id);
      try {
        const taken = await call('activate', 'POST', '/activations', data.clientKey, {
          license_id: license.id,
          fingerprint: `soak-seat-${timeOrderedUuid()}`,
        });
        if (!taken.body?.id) return;
        await call('heartbeat', 'POST', `/activations/${taken.body.id}/heartbeat`, data.clientKey);
        await call('deactivate', 'DELETE', `/activations/${taken.body.id}`, data.clientKey);
      } finally {
        seated.delete(license.id);
      }
    },
    async validate() {
      await call('validate', 'POST', '/licenses/validate', data.clientKey, next(data.machines));
    },
    // Three machines of each pool license report in turn, as a fleet of 3 × pool machines would.
    async sync() {
      const i = syncs++;
      const n = data.licenses.length;
      await call('sync', 'POST', '/licenses/sync', data.clientKey, {
        license_serial: data.licenses[i % n].serial,
        hardware_fingerprint: `soak-fleet-${i % n}-${Math.floor(i / n) % 3}`,
        app_version: '2.4.1',
        features_used: ['pro'],
        seats_in_use: 1,
        report_id: timeOrderedUuid(),
      });
    },
    // 100 serials: 70 of the pool, 20 recently revoked (more of the pool until there are), 10 unknown.
    async 'check-revocation'() {
      const serials = [];
      for (let i = 0; i < 70; i++) serials.push(next(data.licenses).serial);
      for (let i = 0; i < 20; i++)
        serials.push(
          revoked.length > 0 ? revoked[(cursor + i) % revoked.length] : next(data.licenses).serial,
        );
      for (let i = 0; i < 10; i++) serials.push(`LIC-SOAK-UNKNOWN-${data.unique}-${i}`);
      await call('check-revocation', 'POST', '/licenses/check-revocation', data.clientKey, { serials });
    },
    async 'get-license'() {
      await call('get-license', 'GET', `/licenses/${next(data.licenses).id}`, data.readKey);
    },
    async 'list-licenses'() {
      const product = cursor % 2 === 0 ? data.fleet.id : data.seats.id;
      await call('list-licenses', 'GET', `/licenses?product_id=${product}&per_page=20`, data.readKey);
    },
    async 'get-product'() {
      await call('get-product', 'GET', `/products/${data.fleet.id}`, data.readKey);
    },
  };
  // Each action counts the requests it sends; a kind whose requests are all outstanding skips.
  const counted = { activation: 'activate' };

  const started = performance.now();
  const issued = Object.fromEntries(Object.keys(RATES).map((name) => [name, 0]));
  const tick = () => {
    const elapsed = (performance.now() - started) / 1000;
    for (const [name, perSecond] of Object.entries(RATES)) {
      const due = Math.floor(elapsed * perSecond * rate) - issued[name];
      for (let i = 0; i < due; i++) {
        issued[name]++;
        if (outstanding[name] >= MAX_IN_FLIGHT) {
          stats.skipped(counted[name] ?? name);
          continue;
        }
        outstanding[name]++;
        const running = actions[name]()
          .catch(() => undefined)
          .finally(() => {
            outstanding[name]--;
            inFlight.delete(running);
          });
        inFlight.add(running);
      }
    }
  };
  const timer = setInterval(tick, TICK_MS);

  return {
    stats,
    /** Licenses created and revoked so far, and the ring's size. */
    counts: () => ({ created, revoked: revokedCount, ring: ring.length }),
    async stop() {
      clearInterval(timer);
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      await sleep(0);
    },
  };
}

module.exports = { KINDS, RATES, prepare, startLoad };
