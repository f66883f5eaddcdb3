#!/usr/bin/env node
// `npm run bench`: the platform against its ceilings, in one run. Starts the platform on its own
// namespace and database (or targets --url), seeds the data set once (cached by version),
// warms the revocation cache, then runs each scenario on the platform and, right after it, on
// its reference pipeline (bench/reference/: minimal Fastify + nats.js, never part of the product),
// and prints one table of req/s, latency, errors, CPU per process and the ratio to the ceiling.
// Then, for the hot paths, a second table: p50 and p99 at a fixed rate, half the platform's req/s.
//
//   npm run bench -- [--duration 5] [--rounds 4] [--warmup 10] [--connections 50] [--scenarios sync,verify] [--smoke]
//                    [--licenses 100000] [--url http://… --api-key lk_… --org-id … ] [--pg-profile]
//                    [--no-fixed-rate] [--fixed-rate-rounds 2]
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { apiClient, busClient, deleteStreams, pool, withPg } = require('./lib/clients');
const { busyShare, cpuSampler, queuedSampler } = require('./lib/cpu');
const { load, loadRound, summarize } = require('./lib/load');
const { fixedRateRound, summarizeFixed } = require('./lib/fixed-rate');
const { delayMs, scrape } = require('./soak/sampler');
const {
  build,
  createOrganization,
  freePort,
  startPlatform,
  startProcesses,
  waitFor,
} = require('./lib/platform');
const { issueTokens, scenarios, syncTracker } = require('./lib/scenarios');
const { SEED_VERSION, seed } = require('./lib/seed');
const { formatProfile, pgProfiler } = require('./lib/pg-profile');
const { printTable } = require('./lib/report');

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].replace(/^--/, '');
    if (['smoke', 'pg-profile', 'fixed-rate', 'no-fixed-rate'].includes(name)) options[name] = true;
    else options[name] = argv[++i];
  }
  const smoke = Boolean(options.smoke);
  return {
    smoke,
    url: options.url,
    apiKey: options['api-key'] ?? process.env.LICENSING_API_KEY,
    // Seconds per side and round; the sides alternate for `rounds` rounds.
    duration: Number(options.duration ?? (smoke ? 1 : 5)),
    // The smoke (CI) checks only that every scenario runs: one round each.
    rounds: Number(options.rounds ?? (smoke ? 1 : 4)),
    // Seconds of load on each side before its first round. Under license create the platform's
    // first round after a 3 s warm-up was its slowest in every run, by 15–20 %; after 10 s, flat.
    warmup: Number(options.warmup ?? (smoke ? 0 : 10)),
    connections: Number(options.connections ?? (smoke ? 10 : 50)),
    licenses: Number(options.licenses ?? (smoke || options.url ? 2000 : 100_000)),
    scenarios: options.scenarios?.split(','),
    natsUrl: options['nats-url'] ?? 'nats://127.0.0.1:4222',
    redisUrl: options['redis-url'] ?? 'redis://127.0.0.1:6379',
    postgresUrl: options['postgres-url'] ?? 'postgres://postgres@127.0.0.1:5432',
    // With --url: the running platform's BUS_NAMESPACE and database, for the reference pipelines.
    namespace: options.namespace,
    databaseUrl: options['database-url'],
    results: options.results ?? path.join(__dirname, 'results', 'latest.json'),
    // perf on PostgreSQL during every round, each side's share apart (bench/lib/pg-profile.js).
    pgProfile: Boolean(options['pg-profile']),
    // The fixed-rate rounds of the hot paths, on by default (lib/fixed-rate.js).
    // The smoke runs one round: it keeps the code path alive.
    fixedRate: !options['no-fixed-rate'],
    fixedRateRounds: Number(options['fixed-rate-rounds'] ?? (smoke ? 1 : 2)),
  };
}

const say = (line) => process.stdout.write(`${line}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The manifest of a seeded database, kept in a schema of the harness's own inside it. */
async function readManifest(databaseUrl) {
  return withPg(databaseUrl, async (pg) => {
    const { rows } = await pg.query(`SELECT data FROM bench_seed.manifest WHERE version = $1`, [
      SEED_VERSION,
    ]);
    return rows[0]?.data;
  }).catch(() => undefined);
}

async function writeManifest(databaseUrl, manifest) {
  await withPg(databaseUrl, async (pg) => {
    await pg.query('CREATE SCHEMA IF NOT EXISTS bench_seed');
    await pg.query(
      'CREATE TABLE IF NOT EXISTS bench_seed.manifest (version int PRIMARY KEY, data jsonb NOT NULL)',
    );
    await pg.query('INSERT INTO bench_seed.manifest VALUES ($1, $2)', [SEED_VERSION, manifest]);
  });
}

/** One check-revocation pass over every seeded serial: the cache as a running platform has it. */
async function warmCache(baseUrl, manifest) {
  const started = Date.now();
  let count = 0;
  for (const [index, org] of manifest.orgs.entries()) {
    const serials = manifest.serials[index];
    const api = apiClient(baseUrl, org.clientKey);
    await pool(Math.ceil(serials.length / 100), 16, async (i) => {
      await api('POST', '/licenses/check-revocation', { serials: serials.slice(i * 100, i * 100 + 100) });
    });
    count += serials.length;
  }
  say(`  cache warmed: ${count} serials in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Waits for the background work of the previous load (outbox relays, analytics) to finish. */
/**
 * VACUUM (ANALYZE) of the platform's database. Every event passes through an outbox table
 * (inserted, then deleted once published), and with autovacuum off (as on the CI machines) the
 * dead rows of every earlier load stay: the relay's scan for the oldest rows walks them all (a
 * 4 ms scan per batch after a dozen runs). Autovacuum keeps a deployed outbox small; this keeps
 * each scenario, and each run, from paying for the ones before it.
 */
async function vacuum(databaseUrl) {
  await withPg(databaseUrl, (pg) => pg.query('VACUUM (ANALYZE)'));
}

/**
 * Frees the seats an earlier run's activation scenario left (and their grants, which the 24-hour
 * cap counts), so that the platform starts from no seats, as the reference does.
 */
async function freeBenchSeats(databaseUrl) {
  await withPg(databaseUrl, (pg) =>
    pg.query(
      `WITH gone AS (DELETE FROM license.activations WHERE fingerprint LIKE 'bench-seat-%' RETURNING license_id)
       DELETE FROM license.activation_grants g WHERE g.license_id IN (SELECT license_id FROM gone)
         AND NOT EXISTS (SELECT 1 FROM license.activations a
                          WHERE a.license_id = g.license_id AND a.fingerprint NOT LIKE 'bench-seat-%')`,
    ),
  );
}

async function settle(pids, maxMs) {
  if (pids.length === 0) return sleep(1000);
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline && (await busyShare(pids, 500)) > 0.1);
}

/** Total syncs analytics has counted for the organization, over a range around now. */
async function countedSyncs(api) {
  const from = new Date(Date.now() - 2 * 86_400_000).toISOString();
  const to = new Date(Date.now() + 86_400_000).toISOString();
  const usage = await api('GET', `/analytics/usage?from=${from}&to=${to}&interval=day&per_page=100`);
  return usage.buckets.reduce((sum, bucket) => sum + bucket.syncs, 0);
}

/**
 * After the sync load: sends again, with their report_id, the reports that were still in flight
 * when autocannon stopped, then polls analytics until it has counted every report answered 2xx.
 */
async function checkSyncCounted({ baseUrl, org, tracker, baseline }) {
  const stopped = Date.now();
  const send = apiClient(baseUrl, org.clientKey);
  const unanswered = [...tracker.reports.entries()].filter(([, r]) => r.status === 0);
  for (const [, report] of unanswered) {
    await send('POST', '/licenses/sync', JSON.parse(report.body));
    report.status = 200;
  }
  const expected = baseline + tracker.answered();
  const read = apiClient(baseUrl, org.readKeys[0]);
  let counted = await countedSyncs(read);
  while (counted < expected && Date.now() - stopped < 30_000) {
    await sleep(100);
    counted = await countedSyncs(read);
  }
  const delay = (Date.now() - stopped) / 1000;
  return {
    sent: tracker.answered(),
    resent: unanswered.length,
    counted: counted - baseline,
    seconds: Number(delay.toFixed(2)),
    ok: counted === expected && delay <= 5,
  };
}

/** The sync checks of every round: all counted, each within 5 s (the slowest round's delay shown). */
function combineSyncChecks(checks) {
  const sum = (key) => checks.reduce((total, check) => total + check[key], 0);
  return {
    sent: sum('sent'),
    resent: sum('resent'),
    counted: sum('counted'),
    seconds: Math.max(...checks.map((check) => check.seconds)),
    ok: checks.every((check) => check.ok),
  };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const cleanup = [];
  const stopAll = async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  };
  // Stop the platform and reference processes with the harness, whatever stops it.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => void stopAll().then(() => process.exit(130)));
  }
  try {
    return await run(options, cleanup);
  } finally {
    await stopAll();
  }
}

async function run(options, cleanup) {
  const resultsDir = path.dirname(options.results);
  fs.mkdirSync(resultsDir, { recursive: true });
  let baseUrl = options.url;
  let platformProcesses = [];
  let manifest;
  let namespace;
  let databaseUrl;

  if (!baseUrl) {
    say('building (npm run build)…');
    build();
    // The smoke run (CI) takes a database and namespace of its own, dropped afterwards, named like
    // the test suite's so that an interrupted run is swept by the next `npm test`.
    const unique = randomBytes(5).toString('hex');
    namespace = options.smoke ? `t${unique}` : 'bench';
    const database = options.smoke
      ? `licensing_test_${Date.now().toString(36)}_bench${unique}`
      : `licensing_bench_v${SEED_VERSION}_${options.licenses}`;
    databaseUrl = `${options.postgresUrl}/${database}`;
    manifest = options.smoke ? undefined : await readManifest(databaseUrl);
    if (!manifest) {
      say(`fresh database ${database} (seed version ${SEED_VERSION})`);
      await withPg(`${options.postgresUrl}/postgres`, async (pg) => {
        await pg.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
        await pg.query(`CREATE DATABASE "${database}"`);
      });
      await deleteStreams(options.natsUrl, namespace);
    } else say(`seeded database ${database} found (seed version ${SEED_VERSION}): seeding skipped`);
    if (options.smoke) {
      cleanup.push(() =>
        withPg(`${options.postgresUrl}/postgres`, (pg) =>
          pg.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`),
        ),
      );
      cleanup.push(() => deleteStreams(options.natsUrl, namespace));
    }
    const logFile = path.join(resultsDir, 'platform.log');
    say(`starting the platform (namespace ${namespace}; logs in ${path.relative(process.cwd(), logFile)})…`);
    const platform = await startPlatform({
      databaseUrl,
      namespace,
      natsUrl: options.natsUrl,
      redisUrl: options.redisUrl,
      logFile,
      env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
    });
    cleanup.push(() => platform.stop());
    baseUrl = platform.url;
    platformProcesses = platform.processes;

    if (!manifest) {
      say(`seeding ${options.licenses} licenses…`);
      const orgs = [
        createOrganization(`bench-a-${namespace}`, databaseUrl),
        createOrganization(`bench-b-${namespace}`, databaseUrl),
      ];
      const bus = await busClient(options.natsUrl, namespace);
      try {
        manifest = await seed({
          total: options.licenses,
          orgs,
          apiFor: (key) => apiClient(baseUrl, key),
          bus,
          databaseUrl,
        });
      } finally {
        await bus.close();
      }
      if (!options.smoke) await writeManifest(databaseUrl, manifest);
      say(`  seeded in ${manifest.seconds} s`);
    }
  } else {
    // A running platform: one organization (the admin key's), seeded through its API only, each
    // run with products of its own; the reference pipelines read its Redis keys and database.
    if (!options.apiKey) throw new Error('--url needs --api-key (an admin key) or LICENSING_API_KEY');
    namespace = options.namespace ?? '';
    databaseUrl = options.databaseUrl ?? `${options.postgresUrl}/licensing`;
    say(`seeding ${options.licenses} licenses through the API of ${baseUrl}…`);
    manifest = await seed({
      total: options.licenses,
      orgs: [{ adminKey: options.apiKey }],
      apiFor: (key) => apiClient(baseUrl, key),
      codeSuffix: `-${Date.now().toString(36)}`,
    });
    // The organization's id is the `iss` of its license files.
    const jws = Buffer.from(manifest.samples.verify.license_blob, 'base64').toString();
    manifest.orgs[0].id = JSON.parse(Buffer.from(jws.split('.')[1], 'base64url').toString()).iss;
  }
  await warmCache(baseUrl, manifest);

  // The reference pipelines: a gateway process and a responder process, like the real thing.
  const refPort = await freePort();
  const refNamespace = `${namespace}ref`;
  const reference = startProcesses(
    [
      { label: 'ref-resp', main: 'bench/reference/responder.js' },
      { label: 'ref-gw', main: 'bench/reference/gateway.js' },
    ].map((entry) => ({
      ...entry,
      env: {
        REF_PORT: String(refPort),
        REF_NAMESPACE: refNamespace,
        NATS_URL: options.natsUrl,
        REDIS_URL: options.redisUrl,
        REF_REDIS_NAMESPACE: namespace,
        DATABASE_URL: databaseUrl,
        REF_ORG_ID: manifest.orgs[0].id,
        REF_PUBLIC_KEYS: JSON.stringify({
          [manifest.samples.verify.product_id]: manifest.products['bench-desktop'].publicKey,
        }),
      },
    })),
    path.join(resultsDir, 'reference.log'),
  );
  cleanup.push(() => deleteStreams(options.natsUrl, refNamespace));
  cleanup.push(() => reference.stop());
  const refUrl = `http://127.0.0.1:${refPort}`;
  await Promise.race([
    reference.exited,
    waitFor(async () => (await fetch(`${refUrl}/ref/products/${manifest.products['bench-desktop'].id}`)).ok, {
      what: 'the reference pipeline',
      timeoutMs: 60_000,
      intervalMs: 200,
    }),
  ]);

  const shared = [
    { label: 'pg', comm: 'postgres' },
    { label: 'redis', comm: 'redis-server' },
    { label: 'nats', comm: 'nats-server' },
  ];
  const oursSampler = cpuSampler([...platformProcesses, ...shared]);
  const refSampler = cpuSampler([...reference.processes, ...shared]);
  // The same processes' waits for a core, read around the fixed-rate rounds.
  const oursQueued = queuedSampler([...platformProcesses, ...shared]);
  const refQueued = queuedSampler([...reference.processes, ...shared]);
  const platformPids = platformProcesses.map((p) => p.pid);
  const profiler = options.pgProfile ? pgProfiler({ databaseUrl }) : undefined;
  if (profiler) cleanup.push(async () => profiler.close());
  const settings = { connections: options.connections };

  const wanted = (name) => !options.scenarios || options.scenarios.includes(name);
  // License tokens are issued for each run (they are not part of the seeded data).
  if (wanted('sync-token') || wanted('validate-token'))
    manifest.tokens = await issueTokens(manifest, apiClient(baseUrl, manifest.orgs[0].adminKeys[0]));
  const selected = scenarios(manifest).filter((s) => wanted(s.name));
  say(
    `\n${options.connections} connections, ${options.warmup} s warm-up, then ${options.rounds} × ` +
      `${options.duration} s per side (the sides alternating), platform ${baseUrl}, reference ${refUrl}\n`,
  );
  const rows = [];
  for (const scenario of selected) {
    // The smoke (CI) measures nothing: it neither waits for the platform to settle nor vacuums.
    if (!options.smoke) await settle(platformPids, 20_000);
    // The harness's own database only: what autovacuum would have done since the last load.
    if (!options.url && scenario.name === 'activation') await freeBenchSeats(databaseUrl);
    if (!options.url && !options.smoke) await vacuum(databaseUrl);
    const row = { name: scenario.name, label: scenario.label, target: scenario.target };
    const ours = [];
    const ref = [];
    const strict = [];
    const syncChecks = [];
    // Rounds alternate the two sides, so that a machine that speeds up or slows down during the
    // scenario weighs on both alike.
    for (let round = 0; round < options.rounds; round++) {
      // Sync: each round's reports are counted by analytics before the next load starts.
      const tracker = scenario.tracked ? syncTracker() : undefined;
      const baseline = tracker && (await countedSyncs(apiClient(baseUrl, manifest.orgs[0].readKeys[0])));
      const oursRequests = scenario.requests('/api/v1', tracker);
      if (round === 0 && options.warmup > 0)
        await load({ url: baseUrl, requests: oursRequests, ...settings, duration: options.warmup });
      await profiler?.start();
      ours.push(
        await loadRound({
          url: baseUrl,
          requests: oursRequests,
          ...settings,
          duration: options.duration,
          sampler: oursSampler,
        }),
      );
      await profiler?.stop('platform');
      if (tracker)
        syncChecks.push(await checkSyncCounted({ baseUrl, org: manifest.orgs[0], tracker, baseline }));
      if (scenario.noReference) continue;
      // The platform idle again (its outbox relays, consumers and analytics done with the load).
      if (!options.smoke) await settle(platformPids, 20_000);
      const refTracker = scenario.tracked ? syncTracker() : undefined;
      const refRequests = scenario.requests('/ref', refTracker);
      // A scenario may compare two ways of calling the platform itself (a license token against a key).
      const comparedUrl = scenario.referenceOnPlatform ? baseUrl : refUrl;
      if (round === 0 && options.warmup > 0)
        await load({ url: comparedUrl, requests: refRequests, ...settings, duration: options.warmup });
      await profiler?.start();
      ref.push(
        await loadRound({
          url: comparedUrl,
          requests: refRequests,
          ...settings,
          duration: options.duration,
          sampler: scenario.referenceOnPlatform ? oursSampler : refSampler,
        }),
      );
      await profiler?.stop('reference');
      if (!scenario.strictTarget) continue;
      // The strict ceiling: the same pipeline reading entries of the fewest bytes the answer needs.
      if (!options.smoke) await settle(platformPids, 20_000);
      const strictRequests = scenario.requests('/ref/strict', scenario.tracked ? syncTracker() : undefined);
      if (round === 0 && options.warmup > 0)
        await load({ url: refUrl, requests: strictRequests, ...settings, duration: options.warmup });
      strict.push(
        await loadRound({
          url: refUrl,
          requests: strictRequests,
          ...settings,
          duration: options.duration,
          sampler: refSampler,
        }),
      );
    }
    row.ours = summarize(ours, { url: baseUrl, ...settings });
    if (ref.length > 0) row.ref = summarize(ref, { url: refUrl, ...settings });
    if (strict.length > 0) {
      row.strict = summarize(strict, { url: refUrl, ...settings });
      row.strictTarget = scenario.strictTarget;
    }
    if (syncChecks.length > 0) row.syncCheck = combineSyncChecks(syncChecks);
    if (options.fixedRate && scenario.fixedRate)
      row.fixedRate = await fixedRate({
        scenario,
        options,
        baseUrl,
        refUrl,
        platformPids,
        platformProcesses,
        queued: { ours: oursQueued, ref: scenario.referenceOnPlatform ? oursQueued : refQueued },
        max: row.ours.rps,
      });
    if (profiler) {
      row.pgProfile = { platform: profiler.take('platform', row.ours.requests) };
      if (row.ref) row.pgProfile.reference = profiler.take('reference', row.ref.requests);
    }
    rows.push(row);
    say(
      `  ${scenario.name}: ours ${row.ours.rps} req/s${row.ref ? `, ceiling ${row.ref.rps} req/s` : ''}` +
        `${row.strict ? `, strict ceiling ${row.strict.rps} req/s` : ''}`,
    );
    if (row.fixedRate) {
      const { rate, ours: o, ref: r } = row.fixedRate;
      say(`    at ${rate} req/s: ours p99 ${o.p99} ms, ceiling p99 ${r.p99} ms`);
    }
    for (const [side, profile] of Object.entries(row.pgProfile ?? {}))
      for (const line of formatProfile(side, profile)) say(`    ${line}`);
  }

  const report = {
    at: new Date().toISOString(),
    machine: machine(),
    settings: {
      ...settings,
      duration: options.duration,
      rounds: options.rounds,
      warmup: options.warmup,
      licenses: options.licenses,
      fixedRateRounds: options.fixedRate ? options.fixedRateRounds : 0,
    },
    seed: { version: SEED_VERSION, seconds: manifest.seconds },
    rows,
  };
  fs.writeFileSync(options.results, `${JSON.stringify(report, null, 2)}\n`);
  say('');
  printTable(report, say);
  say(`\nresults: ${path.relative(process.cwd(), options.results)}`);
  return rows;
}

/**
 * The scenario's latency under normal load: half of the platform's closed-loop req/s (`max`),
 * sent open loop at a fixed rate (lib/fixed-rate.js) to the platform and to its ceiling, the sides
 * alternating as in the closed-loop rounds. A short warm-up at that rate first opens the
 * connections and warms the harness's client.
 */
async function fixedRate({
  scenario,
  options,
  baseUrl,
  refUrl,
  platformPids,
  platformProcesses,
  queued,
  max,
}) {
  const rate = Math.max(1, Math.round(max / 2));
  const comparedUrl = scenario.referenceOnPlatform ? baseUrl : refUrl;
  const sides = [
    { url: baseUrl, prefix: '/api/v1', rounds: [], queued: queued.ours, waited: {} },
    { url: comparedUrl, prefix: '/ref', rounds: [], queued: queued.ref, waited: {} },
  ];
  const warmup = Math.min(2, options.warmup);
  const eventLoop = [];
  for (let round = 0; round < options.fixedRateRounds; round++) {
    for (const side of sides) {
      if (!options.smoke) await settle(platformPids, 20_000);
      const requests = scenario.requests(side.prefix, scenario.tracked ? syncTracker() : undefined);
      const settings = { url: side.url, requests, rate, connections: options.connections };
      if (round === 0 && warmup > 0) await fixedRateRound({ ...settings, duration: warmup });
      const watched = side === sides[0] ? platformProcesses : [];
      const loops = await eventLoopWatch(watched);
      const stopQueued = side.queued.start();
      side.rounds.push(await fixedRateRound({ ...settings, duration: options.duration }));
      for (const [label, us] of Object.entries(stopQueued()))
        side.waited[label] = (side.waited[label] ?? 0) + us;
      eventLoop.push(await loops.read());
    }
  }
  return {
    rate,
    target: scenario.fixedRate,
    ours: { ...summarizeFixed(sides[0].rounds), queuedUs: perRequest(sides[0]) },
    ref: { ...summarizeFixed(sides[1].rounds), queuedUs: perRequest(sides[1]) },
    eventLoop: worstEventLoop(eventLoop),
  };
}

/** What each process of a side waited for a core while runnable, in µs per request sent. */
function perRequest(side) {
  const requests = side.rounds.reduce((sum, round) => sum + round.requests, 0);
  return Object.fromEntries(
    Object.entries(side.waited).map(([label, us]) => [label, requests > 0 ? Math.round(us / requests) : 0]),
  );
}

/**
 * How long each platform process's event loop was held up during one round: prom-client's
 * event-loop delay p99 and max from its `/metrics`, whose histogram restarts at every scrape
 * (one scrape before the round, one after). A request due while a process is held up waits for
 * it, so these show which process a fixed-rate tail waits on. Processes without a metrics URL
 * (the ceiling's, or `--url` mode) are not watched.
 */
async function eventLoopWatch(processes) {
  const watched = processes.filter((p) => p.url);
  await Promise.all(watched.map((p) => scrape(p.url)));
  return {
    read: async () => {
      const metrics = await Promise.all(watched.map((p) => scrape(p.url)));
      return watched.map((p, i) => ({
        label: p.label,
        p99: delayMs(metrics[i]?.nodejs_eventloop_lag_p99_seconds),
        max: delayMs(metrics[i]?.nodejs_eventloop_lag_max_seconds),
      }));
    },
  };
}

/** Each process's worst round: the highest p99 and max over the rounds, in ms. */
function worstEventLoop(rounds) {
  const worst = {};
  for (const round of rounds)
    for (const { label, p99, max } of round) {
      const seen = (worst[label] ??= { p99: null, max: null });
      if (p99 !== null) seen.p99 = Math.max(seen.p99 ?? 0, p99);
      if (max !== null) seen.max = Math.max(seen.max ?? 0, max);
    }
  return worst;
}

function machine() {
  const os = require('node:os');
  return {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
}

module.exports = { main };

if (require.main === module) {
  main().then(
    (rows) => {
      const failed = rows.filter(
        (row) =>
          row.ours.errors > 0 ||
          row.ref?.errors > 0 ||
          row.strict?.errors > 0 ||
          row.syncCheck?.ok === false ||
          row.fixedRate?.ours.errors > 0 ||
          row.fixedRate?.ref.errors > 0,
      );
      process.exitCode = failed.length > 0 ? 1 : 0;
    },
    (error) => {
      process.stderr.write(`${error.stack ?? error}\n`);
      process.exitCode = 1;
    },
  );
}
