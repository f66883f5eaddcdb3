#!/usr/bin/env node
// `npm run soak`: the platform under a steady, moderate mixed load for a long time, watched for
// growth. Starts every service and the gateway on a database and bus namespace of its own, makes a
// bounded data set, then holds the load (bench/soak/load.js) while it samples each process's RSS,
// file descriptors, connections and event-loop delay, and the backing services' connections
// (bench/soak/sampler.js). Prints a report with each measure's growth over the second half of the
// run (bench/soak/report.js) and writes every sample as JSON. Ctrl-C ends the load early and still
// reports; a second Ctrl-C stops at once. Either way it stops what it started and drops its database.
//
//   npm run soak -- [--minutes 10 | --seconds 30] [--rate 1] [--interval 10] [--strict]
//                   [--pool 200] [--ring 100] [--machines 50] [--results file.json]
//
// Exits 1 when a request got a 5xx or no answer, when a process of the platform exited, or (with
// --strict) when a measure grew beyond its threshold.
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: delay } = require('node:timers/promises');
const { parseArgs } = require('node:util');
const Redis = require('ioredis');
const { deleteStreams, withPg } = require('../lib/clients');
const { build, createOrganization, spawnPlatform } = require('../lib/platform');
const { RATES, prepare, startLoad } = require('./load');
const { analyse, formatReport } = require('./report');
const { startSampler } = require('./sampler');

const say = (line = '') => process.stdout.write(`${line}\n`);

function options() {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string' },
      seconds: { type: 'string' },
      rate: { type: 'string', default: '1' },
      interval: { type: 'string' },
      strict: { type: 'boolean', default: false },
      pool: { type: 'string' },
      ring: { type: 'string' },
      machines: { type: 'string' },
      results: { type: 'string' },
      'postgres-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
      'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
      'nats-url': { type: 'string', default: 'nats://127.0.0.1:4222' },
    },
  });
  const seconds = values.seconds !== undefined ? Number(values.seconds) : 60 * Number(values.minutes ?? 10);
  if (!(seconds > 0)) throw new Error('--minutes or --seconds must be a positive number');
  // A short run (the CI smoke, a quick look) makes a smaller data set.
  const short = seconds < 300;
  const number = (value, fallback) => (value === undefined ? fallback : Number(value));
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    seconds,
    rate: Number(values.rate),
    interval: number(values.interval, Math.min(10, Math.max(1, Math.round(seconds / 20)))),
    strict: values.strict,
    pool: number(values.pool, short ? 20 : 200),
    ring: number(values.ring, short ? 10 : 100),
    machines: number(values.machines, short ? 5 : 50),
    results: values.results ?? path.join(__dirname, '..', 'results', `soak-${stamp}.json`),
    postgresUrl: values['postgres-url'],
    redisUrl: values['redis-url'],
    natsUrl: values['nats-url'],
  };
}

function portOf(url, fallback) {
  return Number(new URL(url.split(',')[0]).port || fallback);
}

async function deleteKeys(redisUrl, pattern) {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function main() {
  const settings = options();
  const cleanup = [];
  let cleaning;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const step of cleanup.reverse()) await step().catch(() => undefined);
    })());
  // The first Ctrl-C (or SIGTERM) ends the load early: the run still reports. A second one stops now.
  // Aborted by a signal, or by a process of the platform exiting during the load.
  const interrupt = new AbortController();
  let signals = 0;
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      signals++;
      if (signals === 1) {
        say(`\n${signal}: ending the load early (again to stop at once)…`);
        interrupt.abort();
      } else void cleanUp().then(() => process.exit(130));
    });
  }
  try {
    const code = await run(settings, cleanup, interrupt);
    return signals > 0 ? 130 : code;
  } finally {
    say('stopping the platform and dropping its database…');
    await cleanUp();
  }
}

async function run(settings, cleanup, interrupt) {
  const resultsDir = path.dirname(settings.results);
  fs.mkdirSync(resultsDir, { recursive: true });
  say('building (npm run build)…');
  build();

  // Named like the test suite's databases, so that an interrupted run is swept by the next `npm
  // test` (an hour later, once nothing is connected). The namespace is not a test one: the suite
  // deletes test streams older than an hour, and a soak may run longer.
  const unique = randomBytes(5).toString('hex');
  const database = `licensing_test_${Date.now().toString(36)}_soak${unique}`;
  const namespace = `soak${unique}`;
  await withPg(`${settings.postgresUrl}/postgres`, (pg) => pg.query(`CREATE DATABASE "${database}"`));
  cleanup.push(() =>
    withPg(`${settings.postgresUrl}/postgres`, (pg) =>
      pg.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`),
    ),
  );
  cleanup.push(() => deleteStreams(settings.natsUrl, namespace));
  cleanup.push(() => deleteKeys(settings.redisUrl, `${namespace}:*`));

  const logFile = path.join(resultsDir, 'soak-platform.log');
  say(`starting the platform (database ${database}, namespace ${namespace}; logs in ${relative(logFile)})…`);
  const databaseUrl = `${settings.postgresUrl}/${database}`;
  // Each process leads a process group of its own, so that Ctrl-C in the terminal reaches only the
  // soak, which then reports and stops them by PID.
  const platform = await spawnPlatform({
    databaseUrl,
    namespace,
    natsUrl: settings.natsUrl,
    redisUrl: settings.redisUrl,
    logFile,
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
    detached: true,
  });
  cleanup.push(() => platform.stop());
  await Promise.race([platform.exited, platform.ready(180_000)]);
  if (interrupt.signal.aborted) return 130;
  for (const p of platform.processes) say(`  ${p.label}: pid ${p.pid}`);

  say(
    `making the data set (${settings.pool} licenses, ${settings.machines} machines, a ring of ${settings.ring})…`,
  );
  const org = createOrganization(`soak-${unique}`, databaseUrl);
  const data = await prepare({
    baseUrl: platform.url,
    adminKey: org.adminKey,
    unique,
    poolSize: settings.pool,
    ringSize: settings.ring,
    machines: settings.machines,
  });
  if (interrupt.signal.aborted) return 130;

  const sampler = await startSampler({
    processes: platform.processes,
    postgresUrl: settings.postgresUrl,
    database,
    redisUrl: settings.redisUrl,
    namespace,
    ports: {
      [portOf(settings.postgresUrl, 5432)]: 'pg',
      [portOf(settings.redisUrl, 6379)]: 'redis',
      [portOf(settings.natsUrl, 4222)]: 'nats',
    },
  });
  cleanup.push(() => sampler.close());

  let processFailure;
  platform.exited.catch((error) => {
    processFailure = error.message;
    interrupt.abort();
  });
  // An activation cycle is three requests.
  const perSecond =
    (Object.values(RATES).reduce((sum, r) => sum + r, 0) + 2 * RATES.activation) * settings.rate;
  const mix = Object.entries(RATES).map(([kind, r]) => `${kind} ${r * settings.rate}/s`);
  say(`load: ${mix.join(', ')} (activation: activate + heartbeat + deactivate), ~${perSecond} req/s`);
  say(
    `for ${settings.seconds} s, a sample every ${settings.interval} s${settings.strict ? ' (strict)' : ''}`,
  );
  say('');

  // The first sample is the platform idle over one interval, just before the load starts.
  await sampler.prime();
  await delay(settings.interval * 1000, undefined, { signal: interrupt.signal }).catch(() => undefined);
  if (processFailure) throw new Error(processFailure);
  if (interrupt.signal.aborted) return 130;
  let started = performance.now();
  let load;
  const samples = [];
  const take = async () => {
    const t = Math.round((performance.now() - started) / 1000);
    const sample = { t, at: new Date().toISOString(), load1: os.loadavg()[0], ...(await sampler.sample()) };
    sample.requests = load?.stats.takeInterval() ?? {};
    sample.licenses = load?.counts() ?? { created: 0, revoked: 0, ring: settings.ring };
    samples.push(sample);
    say(progressLine(sample));
  };
  await take();
  const tablesBefore = await sampler.tables();
  load = startLoad({ baseUrl: platform.url, data, rate: settings.rate });
  started = performance.now();
  for (let i = 1; !interrupt.signal.aborted; i++) {
    const at = Math.min(i * settings.interval, settings.seconds);
    const wait = started + at * 1000 - performance.now();
    if (wait > 0) await delay(wait, undefined, { signal: interrupt.signal }).catch(() => undefined);
    if (interrupt.signal.aborted) break;
    await take();
    if (at >= settings.seconds) break;
  }
  const seconds = (performance.now() - started) / 1000;
  await load.stop();
  const tablesAfter = await sampler.tables();
  const before = new Map(tablesBefore.map((table) => [table.name, table]));
  const tables = tablesAfter.map(({ name, ...end }) => ({
    name,
    start: before.get(name)
      ? { live: before.get(name).live, dead: before.get(name).dead, mib: before.get(name).mib }
      : null,
    end,
  }));

  const requests = load.stats.summary(seconds);
  const growth = analyse(samples, { seconds });
  const http5xx = Object.values(requests).reduce((sum, r) => sum + r.http5xx, 0);
  const unanswered = Object.values(requests).reduce((sum, r) => sum + r.failed, 0);
  const result = {
    at: new Date().toISOString(),
    seconds: Number(seconds.toFixed(1)),
    interrupted: interrupt.signal.aborted && !processFailure,
    settings: { ...settings, rates: RATES },
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model,
      memory_gb: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
    },
    database,
    namespace,
    processes: platform.processes.map(({ label, pid }) => ({ label, pid })),
    licenses: load.counts(),
    requests,
    database_tables: { autovacuum: await sampler.autovacuum(), tables },
    growth,
    samples,
    verdict: {
      http5xx,
      unanswered,
      process_exited: processFailure ?? null,
      growing: growth.growing.map((r) => `${r.scope} ${r.label}`),
    },
  };
  fs.writeFileSync(settings.results, `${JSON.stringify(result, null, 2)}\n`);

  say('');
  for (const line of formatReport(result)) say(line);
  say('');
  const failures = [];
  if (http5xx > 0) failures.push(`${http5xx} answers were 5xx`);
  if (unanswered > 0) failures.push(`${unanswered} requests got no answer`);
  if (processFailure) failures.push(processFailure);
  const growingText = growth.growing.map(
    (r) => `${r.scope} ${r.label} +${r.slope_per_10min} per 10 min (threshold +${r.threshold})`,
  );
  if (growingText.length > 0) say(`GROWS beyond its threshold: ${growingText.join('; ')}`);
  else if (growth.judged) say('No measure grows beyond its threshold.');
  else say('Growth not judged: the run is too short (10 minutes at least).');
  if (failures.length > 0) say(`FAILED: ${failures.join('; ')}`);
  say(`results: ${relative(settings.results)}`);
  if (failures.length > 0) return 1;
  return settings.strict && growingText.length > 0 ? 1 : 0;
}

function relative(file) {
  const name = path.relative(process.cwd(), file);
  return name.startsWith('..') ? file : name;
}

const SHORT = {
  gateway: 'gw',
  'product-service': 'prod',
  'license-service': 'lic',
  'revocation-service': 'rev',
  'analytics-service': 'ana',
  'webhook-service': 'hook',
};

/** One line per sample while the soak runs. */
function progressLine(sample) {
  const kinds = Object.values(sample.requests);
  const sum = (key) => kinds.reduce((total, k) => total + k[key], 0);
  const each = (key, digits = 0) =>
    Object.entries(sample.processes)
      .map(([label, p]) => `${SHORT[label] ?? label} ${p ? p[key]?.toFixed?.(digits) : '—'}`)
      .join(' ');
  return (
    `${String(sample.t).padStart(6)} s  req ${sum('requests')} (5xx ${sum('http5xx')}, 4xx ${sum('http4xx')}, ` +
    `no answer ${sum('failed')}, skipped ${sum('skipped')})  rss MiB: ${each('rss_mib')}  fds: ${each('fds')}  ` +
    `el p99 ms: ${each('el_p99_ms', 1)}  pg ${sample.pg_connections}  redis ${sample.redis_clients}`
  );
}

if (require.main === module) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`${error.stack ?? error}\n`);
      process.exitCode = 1;
    },
  );
}
