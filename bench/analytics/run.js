#!/usr/bin/env node
// Analytics at volume: a history generated straight into PostgreSQL, then query latency through
// the service's bus handlers, ingest through the real consumer, and disk per million reports.
//   npm run build && npm run bench:analytics -- --reports 50000000   (see docs/analytics.md)
//   npm run bench:analytics -- --smoke                               (20,000 reports, seconds)
const { randomBytes, randomUUID } = require('node:crypto');
const { v7: timeOrderedUuid } = require('uuid');
const { parseArgs } = require('node:util');
const { Client } = require('pg');
require('../../tools/register-paths');
const fs = require('node:fs');
const path = require('node:path');
const { build, freePort, startProcesses } = require('../lib/platform');
const { cpuSampler } = require('../lib/cpu');

const { values: args } = parseArgs({
  options: {
    reports: { type: 'string', default: '2000000' },
    licenses: { type: 'string', default: '200000' },
    days: { type: 'string', default: '30' },
    ingest: { type: 'string', default: '100000' },
    // Licenses the ingest reports come from: each reports ingest / this many times. The default, 4,
    // is a fleet syncing every 15 minutes seen over an hour; 1 makes every report a new license.
    'reports-per-license': { type: 'string', default: '4' },
    samples: { type: 'string', default: '20' },
    database: { type: 'string' },
    keep: { type: 'boolean', default: false },
    smoke: { type: 'boolean', default: false },
  },
});
const REPORTS = args.smoke ? 20_000 : Number(args.reports);
const LICENSES = args.smoke ? 2_000 : Number(args.licenses);
const DAYS = Number(args.days);
const INGEST = args.smoke ? 2_000 : Number(args.ingest);
const INGEST_LICENSES = Math.max(1, Math.round(INGEST / Number(args['reports-per-license'])));
const SAMPLES = args.smoke ? 3 : Number(args.samples);
const SERVER = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';
const UNIQUE = randomBytes(5).toString('hex');
// The smoke run (CI) takes a database named like the test suite's, so that an interrupted run is
// swept by the next `npm test`, and a namespace of its own.
const DATABASE =
  args.database ??
  (args.smoke
    ? `licensing_test_${Date.now().toString(36)}_bana${UNIQUE}`
    : `licensing_bench_analytics_${REPORTS}`);
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const NAMESPACE = args.smoke ? `t${UNIQUE}` : `bana${Date.now().toString(36)}`;
const ORGS = 3;
const PRODUCTS_PER_ORG = 2;

const log = (line) => process.stdout.write(`${line}\n`);
const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * Set-based equivalent of analytics.store_sync_reports for one whole day already in sync_reports
 * (the last-seen rows are filled once every day is in).
 */
const rollupDay = (day) => {
  const span = `received_at >= '${day}T00:00:00Z' AND received_at < ('${day}'::date + 1)::timestamp AT TIME ZONE 'UTC'`;
  const all = `'00000000-0000-0000-0000-000000000000'::uuid`;
  const bit = `1 << extract(hour FROM received_at AT TIME ZONE 'UTC')::int`;
  return [
    `INSERT INTO analytics.report_id_months VALUES (date_trunc('month', '${day}'::date)) ON CONFLICT DO NOTHING`,
    `INSERT INTO analytics.sync_report_ids SELECT report_id, date_trunc('month', '${day}'::date) FROM analytics.sync_reports WHERE ${span} ORDER BY 1`,
    `INSERT INTO analytics.active_licenses_daily SELECT org_id, product_id, '${day}'::date, license_id, bit_or(${bit}), bit_or(${bit}) FROM analytics.sync_reports WHERE ${span} GROUP BY 1, 2, 3, 4`,
    `INSERT INTO analytics.active_fingerprints_daily SELECT org_id, p, '${day}'::date, hardware_fingerprint, bit_or(${bit}), bit_or(${bit}) FROM analytics.sync_reports, LATERAL (VALUES (product_id), (${all})) s(p) WHERE ${span} AND hardware_fingerprint IS NOT NULL GROUP BY 1, 2, 3, 4`,
    `INSERT INTO analytics.usage_hourly SELECT org_id, p, date_trunc('hour', received_at, 'UTC'), count(*), count(DISTINCT license_id), count(DISTINCT hardware_fingerprint), max(seats_in_use) FROM analytics.sync_reports, LATERAL (VALUES (product_id), (${all})) s(p) WHERE ${span} GROUP BY 1, 2, 3`,
    `INSERT INTO analytics.usage_daily SELECT org_id, p, '${day}'::date, count(*), count(DISTINCT license_id), count(DISTINCT hardware_fingerprint), max(seats_in_use) FROM analytics.sync_reports, LATERAL (VALUES (product_id), (${all})) s(p) WHERE ${span} GROUP BY 1, 2`,
    `INSERT INTO analytics.feature_usage_hourly SELECT org_id, product_id, date_trunc('hour', received_at, 'UTC'), f, count(*) FROM analytics.sync_reports, unnest(features_used) f WHERE ${span} GROUP BY 1, 2, 3, 4`,
    `INSERT INTO analytics.version_usage_hourly SELECT org_id, product_id, date_trunc('hour', received_at, 'UTC'), coalesce(app_version, ''), count(*) FROM analytics.sync_reports WHERE ${span} GROUP BY 1, 2, 3, 4`,
  ];
};

/** One day of reports: licenses chosen at random, 1–3 machines each, a version and features each. */
const generateDay = (day, count) => `
  INSERT INTO analytics.sync_reports
  SELECT gen_random_uuid(), bench_id('org' || (l % ${ORGS})), bench_id('lic' || l),
         bench_id('prod' || (l % ${ORGS}) || '-' || (l / ${ORGS}) % ${PRODUCTS_PER_ORG}),
         'LIC-' || l, 'machine-' || l || '-' || (g % (1 + l % 3)),
         (ARRAY['2.4.1', '2.5.0', '2.10.0', '3.0.0', NULL])[1 + (g % 5)],
         CASE l % 5 WHEN 0 THEN '{pro}'::text[] WHEN 1 THEN '{pro,export}' WHEN 2 THEN '{sso}' WHEN 3 THEN '{}' ELSE '{pro,sso,api}' END,
         CASE WHEN g % 4 = 0 THEN NULL ELSE 1 + (g % 7) END, 'ok',
         '${day}T00:00:00Z'::timestamptz + ((g - 1)::float8 / ${count}) * interval '1 day'
    FROM generate_series(1, ${count}) g, LATERAL (SELECT (hashint4(g # ${day.replace(/-/g, '')}) & 2147483647) % ${LICENSES} AS l) x`;

/** The sync scenario of the last `npm run bench` on this checkout, if it ran one. */
function lastSyncRate() {
  try {
    const latest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'results', 'latest.json'), 'utf8'));
    const row = latest.rows.find((r) => r.name === 'sync');
    return row && row.ours.rps > 0
      ? { at: latest.at.slice(0, 16).replace('T', ' '), rps: row.ours.rps }
      : undefined;
  } catch {
    return undefined;
  }
}

async function main() {
  log('building (npm run build)…');
  build();
  const admin = new Client({ connectionString: `${SERVER}/postgres` });
  await admin.connect();
  const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])).rowCount > 0;
  if (!exists) await admin.query(`CREATE DATABASE "${DATABASE}"`);
  const url = `${SERVER}/${DATABASE}`;

  const {
    startAnalyticsService,
    loadAnalyticsServiceConfig,
    PartitionsService,
  } = require('@licensing/app/analytics-service');
  const { BusClient, streamName } = require('@licensing/shared/messaging');
  const { Messages, Streams, syncReportSubject } = require('@licensing/contracts');
  const { requestContext } = require('@licensing/shared/logging');
  const env = {
    DATABASE_URL: url,
    NATS_URL,
    BUS_NAMESPACE: NAMESPACE,
    LOG_LEVEL: 'warn',
    PORT: '0',
    HEALTH_PORT: '0',
    ANALYTICS_RAW_RETENTION_DAYS: String(DAYS + 5),
  };
  // In this process only to generate the history and seal its days (the partition job's own code);
  // queries and ingest go to the service as its own process, as it runs in production.
  const app = await startAnalyticsService(loadAnalyticsServiceConfig({ ...process.env, ...env }));
  const db = new Client({ connectionString: url });
  await db.connect();
  const bus = new BusClient({
    natsUrl: NATS_URL,
    namespace: NAMESPACE,
    timeoutMs: 60_000,
    name: 'bench-analytics',
  });
  await bus.connect();

  const today = new Date().toISOString().slice(0, 10);
  const dayOf = (i) => new Date(Date.parse(today) - i * 86_400_000).toISOString().slice(0, 10);
  // Deterministic ids that are valid version-4 UUIDs, as the API's validation expects.
  await db.query(
    `CREATE OR REPLACE FUNCTION public.bench_id(text) RETURNS uuid IMMUTABLE LANGUAGE sql
       AS $$ SELECT overlay(overlay(md5($1) placing '4' from 13) placing '8' from 17)::uuid $$`,
  );
  const seeded = Number((await db.query('SELECT count(*) FROM analytics.sync_reports')).rows[0].count);
  if (seeded < REPORTS * 0.99) {
    log(
      `Generating ${REPORTS.toLocaleString()} reports over ${DAYS} days for ${LICENSES.toLocaleString()} licenses…`,
    );
    const start = process.hrtime.bigint();
    for (let i = DAYS; i >= 1; i -= 1) {
      const day = dayOf(i);
      await db.query('SELECT analytics.create_partitions($1::date)', [day]);
      await db.query(generateDay(day, Math.round(REPORTS / DAYS)));
      for (const sql of rollupDay(day)) await db.query(sql);
    }
    // What the store function's last-seen upserts leave: each license's and machine's latest hour,
    // the highest bit of its latest day's mask.
    const lastHour = `(max(day)::timestamp + (floor(log(2, (array_agg(hours ORDER BY day DESC))[1]))::int) * interval '1 hour') AT TIME ZONE 'UTC'`;
    await db.query(`INSERT INTO analytics.license_last_seen
      SELECT org_id, product_id, license_id, ${lastHour} FROM analytics.active_licenses_daily GROUP BY 1, 2, 3`);
    await db.query(`INSERT INTO analytics.fingerprint_last_seen
      SELECT org_id, product_id, fingerprint, ${lastHour} FROM analytics.active_fingerprints_daily GROUP BY 1, 2, 3`);
    await db.query('ANALYZE');
    await db.query('VACUUM analytics.license_last_seen, analytics.fingerprint_last_seen');
    // What the service's hourly partition job does for every day that has ended.
    await app.get(PartitionsService).sealEndedDays();
    log(`  generated in ${(ms(start) / 1000).toFixed(0)} s`);
  } else log(`Reusing ${seeded.toLocaleString()} reports in ${DATABASE}`);
  await app.close();
  const resultsDir = path.join(__dirname, '..', 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  const startService = async () => {
    const healthPort = await freePort();
    const running = startProcesses(
      [
        {
          label: 'analytics-service',
          main: 'dist/apps/analytics-service/src/main.js',
          env: { ...env, HEALTH_PORT: String(healthPort) },
          url: `http://127.0.0.1:${healthPort}`,
        },
      ],
      path.join(resultsDir, 'analytics-service.log'),
    );
    await Promise.race([running.exited, running.ready(120_000)]);
    return running;
  };
  let service = await startService();

  // Queries: each through the service's bus handler, as the gateway sends it.
  const orgId = (await db.query(`SELECT bench_id('org0') AS id`)).rows[0].id;
  const productId = (await db.query(`SELECT bench_id('prod0-0') AS id`)).rows[0].id;
  const send = (message, data) =>
    requestContext.run({ request_id: randomUUID(), org_id: orgId }, () => bus.send(message, data));
  const rows = [];
  for (const days of [1, 7, 30]) {
    const from = `${dayOf(days)}T00:00:00.000Z`;
    const to = `${today}T00:00:00.000Z`;
    const queries = {
      'usage (day)': [Messages.analytics.usage, { from, to, interval: 'day' }],
      'usage (hour)': [Messages.analytics.usage, { from, to, interval: 'hour', per_page: 100 }],
      'usage, product': [Messages.analytics.usage, { from, to, product_id: productId }],
      'usage (day), unaligned': [
        Messages.analytics.usage,
        { from: `${dayOf(days)}T13:17:00.000Z`, to: new Date().toISOString(), interval: 'day' },
      ],
      // Both ends inside the same UTC day: the one shape the day's hour masks answer with a scan.
      ...(days === 1
        ? {
            'usage (day), inside one day': [
              Messages.analytics.usage,
              { from: `${dayOf(1)}T01:17:00.000Z`, to: `${dayOf(1)}T22:43:00.000Z`, interval: 'day' },
            ],
          }
        : {}),
      features: [Messages.analytics.features, { from, to }],
      versions: [Messages.analytics.versions, { from, to }],
      active:
        days === 1
          ? [Messages.analytics.active, { window: '24h' }]
          : [Messages.analytics.active, { window: `${days}d` }],
      'license usage': [
        Messages.analytics.licenseUsage,
        {
          id: (
            await db.query(`SELECT license_id AS id FROM analytics.sync_reports WHERE org_id = $1 LIMIT 1`, [
              orgId,
            ])
          ).rows[0].id,
        },
      ],
    };
    for (const [name, [message, data]] of Object.entries(queries)) {
      if (name === 'license usage' && days !== 30) continue;
      const times = [];
      await send(message, data).catch((error) => {
        throw new Error(`${name}: ${JSON.stringify(error.errors ?? error.message)}`);
      });
      for (let s = 0; s < SAMPLES; s += 1) {
        const start = process.hrtime.bigint();
        await send(message, data);
        times.push(ms(start));
      }
      times.sort((a, b) => a - b);
      rows.push({
        query: name,
        days: name === 'license usage' ? '—' : days,
        p50: pct(times, 50),
        p95: pct(times, 95),
      });
    }
  }

  // Ingest through the real consumer: publish as the revocation service does, then wait.
  const stream = streamName(NAMESPACE, Streams.syncReports.name);
  const jsm = await bus.connection().jetstreamManager();
  const pending = async () => {
    const info = await jsm.consumers.info(stream, 'analytics-service');
    return info.num_pending + info.num_ack_pending;
  };
  const orgs = [0, 1, 2].map((k) => ({ id: null, k }));
  for (const o of orgs) o.id = (await db.query(`SELECT bench_id('org' || $1::text) AS id`, [o.k])).rows[0].id;
  const fleet = Array.from({ length: INGEST_LICENSES }, () => randomUUID());
  const counted = async () =>
    Number(
      (
        await db.query(
          'SELECT coalesce(sum(syncs), 0) AS n FROM analytics.usage_daily WHERE product_id = $1',
          ['00000000-0000-0000-0000-000000000000'],
        )
      ).rows[0].n,
    );
  /** INGEST reports from 64 publishers in flight, as the revocation service publishes them. */
  const publish = async () => {
    let published = 0;
    const worker = async () => {
      while (published < INGEST) {
        const i = published++;
        const l = i % INGEST_LICENSES;
        const o = orgs[l % ORGS];
        const record = {
          // As the SDK and the revocation service make them: time-ordered.
          report_id: timeOrderedUuid(),
          org_id: o.id,
          license_id: fleet[l],
          product_id: o.id,
          serial: `LIC-INGEST-${l}`,
          hardware_fingerprint: `machine-${l}`,
          app_version: '3.0.0',
          features_used: i % 2 ? ['pro'] : ['pro', 'export'],
          seats_in_use: 1 + (i % 5),
          status: 'ok',
          received_at: new Date().toISOString(),
        };
        await bus.publishDurable(syncReportSubject(o.id), JSON.stringify(record), record.report_id);
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
  };
  const perReport = (spent, reports, { publishers }) =>
    Object.entries(spent)
      .filter(([label]) => label !== 'loadgen' || publishers)
      .map(
        ([label, us]) =>
          `${label === 'analytics-service' ? 'ana' : label === 'loadgen' ? 'publishers' : label} ${Math.round(us / reports)}`,
      )
      .join(' · ');
  const samplerOf = (running) =>
    cpuSampler([
      ...running.processes,
      { label: 'pg', comm: 'postgres' },
      { label: 'nats', comm: 'nats-server' },
    ]);

  // 1. Publishing and storing at once, on the same cores.
  const before = await counted();
  let spent = samplerOf(service).start();
  const publishStart = process.hrtime.bigint();
  await publish();
  const publishMs = ms(publishStart);
  while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 50));
  const ingestMs = ms(publishStart);
  const lagMs = ingestMs - publishMs;
  const cpuPerReport = perReport(spent(), INGEST, { publishers: true });
  const after = await counted();

  // 2. A backlog drained: the reports published while the service is stopped, then the consumer
  // alone, timed from the first report stored to the last acknowledged (no publisher on the cores).
  await service.stop();
  await publish();
  service = await startService();
  spent = samplerOf(service).start();
  // The consumer may have begun while the service started: the CPU is of what was left then.
  const backlog = await pending();
  let drainStart;
  let left;
  while ((left = await pending()) > 0) {
    if (drainStart === undefined && left < INGEST) drainStart = { at: process.hrtime.bigint(), left };
    await new Promise((r) => setTimeout(r, 20));
  }
  const drainMs = drainStart ? ms(drainStart.at) : 0;
  const drainRate = drainStart ? Math.round(drainStart.left / (drainMs / 1000)) : 0;
  const drainCpu = perReport(spent(), Math.max(1, backlog), { publishers: false });
  const drained = (await counted()) - after;

  const disk = (
    await db.query(
      `SELECT sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname LIKE 'sync_reports_p%') AS raw,
              sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname LIKE 'active_%_p%') AS active,
              sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname LIKE 'sync_report_ids_p%') AS ids,
              sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname LIKE '%_last_seen') AS last_seen,
              sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname ~ '^(usage|feature|version)_.*_p\\d+$') AS rollups
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'analytics' AND c.relkind = 'r'`,
    )
  ).rows[0];
  const total = Number((await db.query('SELECT count(*) FROM analytics.sync_reports')).rows[0].count);
  const perMillion = (bytes) => `${(((Number(bytes) / total) * 1e6) / 2 ** 20).toFixed(0)} MiB`;

  log(
    `\n${total.toLocaleString()} reports, ${LICENSES.toLocaleString()} licenses, ${ORGS} organizations, ${ORGS * PRODUCTS_PER_ORG} products, ${DAYS} days\n`,
  );
  log('| query | days | p50 | p95 | target p95 ≤ 200 ms |');
  log('|---|--:|--:|--:|---|');
  for (const r of rows) {
    log(
      `| ${r.query} | ${r.days} | ${r.p50.toFixed(1)} ms | ${r.p95.toFixed(1)} ms | ${r.p95 <= 200 ? 'yes' : 'NO'} |`,
    );
  }
  log(`| last-seen rows | ${(Number(disk.last_seen) / 2 ** 20).toFixed(0)} MiB in all |`);
  log(`\n| ingest | value |\n|---|--:|`);
  log(
    `| reports published (64 publishers in flight) | ${INGEST.toLocaleString()} from ${INGEST_LICENSES.toLocaleString()} licenses in ${(publishMs / 1000).toFixed(1)} s |`,
  );
  log(`| counted by analytics | ${(after - before).toLocaleString()} |`);
  log(
    `| ingest rate through the consumer | ${Math.round(INGEST / (ingestMs / 1000)).toLocaleString()} reports/s |`,
  );
  log(`| lag after the last publish | ${(lagMs / 1000).toFixed(2)} s |`);
  log(`| CPU per report (µs) | ${cpuPerReport} |`);
  log(
    `| a backlog of ${INGEST.toLocaleString()} reports drained by the consumer alone | ${drainRate.toLocaleString()} reports/s |`,
  );
  log(`| counted by analytics | ${drained.toLocaleString()} |`);
  log(`| CPU per report while draining (µs) | ${drainCpu} |`);
  // The target is a ratio to the sync rate `npm run bench` reaches on the same machine: its last run.
  const sync = lastSyncRate();
  log(
    sync
      ? `| against the sync rate of the last \`npm run bench\` (${sync.at}, ${sync.rps.toLocaleString()} req/s) | ${(INGEST / (ingestMs / 1000) / sync.rps).toFixed(1)}× while published · ${(drainRate / sync.rps).toFixed(1)}× drained (target ≥ 3×) |`
      : '| against the sync rate of `npm run bench` | no sync scenario in bench/results/latest.json: run `npm run bench` first |',
  );
  log(
    `\n| disk per million reports | raw ${perMillion(disk.raw)} · report ids ${perMillion(disk.ids)} · active rows ${perMillion(disk.active)} · rollups ${perMillion(disk.rollups)} |`,
  );

  await bus.onApplicationShutdown();
  await service.stop();
  await jsm.streams.delete(stream).catch(() => undefined);
  await db.end();
  if (!args.keep) await admin.query(`DROP DATABASE "${DATABASE}" WITH (FORCE)`);
  await admin.end();
  if (after - before !== INGEST || drained !== INGEST) process.exitCode = 1;
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
