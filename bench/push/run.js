#!/usr/bin/env node
// Push revocation at scale: how many idle Server-Sent Events connections one gateway holds, and
// how long a revocation takes to reach the connections that follow its serial (from DELETE
// answered to the event read by the client), at that count.
//   npm run build && node bench/push/run.js --connections 10000 --revocations 50
// It starts the platform (as `npm run bench` does) on a throw-away database and namespace.
const http = require('node:http');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { Client } = require('pg');
const { startPlatform, root } = require('../lib/platform');
const { spawnSync } = require('node:child_process');

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string', default: '10000' },
    revocations: { type: 'string', default: '50' },
    'postgres-url': {
      type: 'string',
      default: process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432',
    },
    'nats-url': { type: 'string', default: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' },
    'redis-url': { type: 'string', default: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
  },
});
const CONNECTIONS = Number(args.connections);
const REVOCATIONS = Number(args.revocations);

const log = (line) => process.stdout.write(`${line}\n`);
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const rssMb = (pid) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
};

async function withPg(url, work) {
  const pg = new Client({ connectionString: url });
  await pg.connect();
  try {
    return await work(pg);
  } finally {
    await pg.end();
  }
}

/** One idle stream: resolves once `ready` arrived; `onEvent(serial)` for each license event. */
function openStream(baseUrl, key, serials, onEvent) {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${baseUrl}/api/v1/licenses/events?serials=${serials.join(',')}`,
      { agent: false, headers: { authorization: `Bearer ${key}` } },
      (response) => {
        if (response.statusCode !== 200) return reject(new Error(`stream answered ${response.statusCode}`));
        response.setEncoding('utf8');
        let pending = '';
        let ready = false;
        response.on('data', (chunk) => {
          pending += chunk;
          let end;
          while ((end = pending.indexOf('\n\n')) !== -1) {
            const frame = pending.slice(0, end);
            pending = pending.slice(end + 2);
            if (!ready && frame.includes('event: ready')) {
              ready = true;
              resolve(request);
            }
            const serial = /"serial":"([^"]+)"/.exec(frame)?.[1];
            if (serial && frame.includes('event: license.revoked')) onEvent(serial);
          }
        });
      },
    );
    request.on('error', reject);
  });
}

async function main() {
  const unique = randomBytes(5).toString('hex');
  const namespace = `bpush${unique}`;
  const database = `licensing_bench_push_${unique}`;
  const databaseUrl = `${args['postgres-url']}/${database}`;
  await withPg(`${args['postgres-url']}/postgres`, (pg) => pg.query(`CREATE DATABASE "${database}"`));
  const logFile = path.join(__dirname, '..', 'results', 'push-platform.log');
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const platform = await startPlatform({
    databaseUrl,
    namespace,
    natsUrl: args['nats-url'],
    redisUrl: args['redis-url'],
    logFile,
    // One key opens every stream: its budget is not what is measured.
    extraEnv: { LOG_LEVEL: 'warn', RATE_LIMIT_ENABLED: 'false' },
  });
  try {
    const cli = spawnSync(process.execPath, ['tools/operator.js', 'org', 'create', `bench-push-${unique}`], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl },
      encoding: 'utf8',
    });
    const adminKey = /^(lk_\S+)$/m.exec(cli.stdout)?.[1];
    if (!adminKey) throw new Error(`org create failed: ${cli.stdout}${cli.stderr}`);
    const api = async (method, route, body) => {
      const response = await fetch(`${platform.url}/api/v1${route}`, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: body && JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
      return response.json();
    };
    const keyPair = await api('POST', '/key-pairs', { name: 'bench' });
    const product = await api('POST', '/products', {
      name: 'Push',
      code: `push-${unique}`,
      key_pair_id: keyPair.id,
    });
    const licenses = [];
    for (let i = 0; i < REVOCATIONS; i++)
      licenses.push(await api('POST', '/licenses', { product_id: product.id }));

    const gateway = platform.processes.find((p) => p.label === 'gw');
    const rssBefore = rssMb(gateway.pid);
    // Each connection follows one of the licenses to revoke and two serials that never change.
    const arrivals = new Map(licenses.map((l) => [l.serial, []]));
    const opened = [];
    const started = Date.now();
    for (let i = 0; i < CONNECTIONS; i += 200) {
      const batch = [];
      for (let j = i; j < Math.min(i + 200, CONNECTIONS); j++) {
        const serial = licenses[j % licenses.length].serial;
        batch.push(
          openStream(platform.url, adminKey, [serial, `LIC-IDLE-${j}`, 'LIC-IDLE-SHARED'], (s) =>
            arrivals.get(s).push(performance.now()),
          ),
        );
      }
      opened.push(...(await Promise.all(batch)));
    }
    const openSeconds = (Date.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const rssAfter = rssMb(gateway.pid);
    log(
      `${opened.length} streams open in ${openSeconds.toFixed(1)} s; gateway RSS ${rssBefore.toFixed(0)} → ${rssAfter.toFixed(0)} MiB (${(((rssAfter - rssBefore) * 1024) / opened.length).toFixed(1)} KiB per stream)`,
    );

    const latencies = [];
    const fromSent = [];
    const followers = Math.ceil(CONNECTIONS / licenses.length);
    for (const license of licenses) {
      const sent = performance.now();
      await api('DELETE', `/licenses/${license.id}`);
      const answered = performance.now();
      const deadline = Date.now() + 10_000;
      while (
        arrivals.get(license.serial).length < Math.floor(CONNECTIONS / licenses.length) &&
        Date.now() < deadline
      ) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      for (const at of arrivals.get(license.serial)) {
        // Negative: the event reached the stream before the DELETE's own answer reached its client.
        latencies.push(at - answered);
        fromSent.push(at - sent);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    latencies.sort((a, b) => a - b);
    fromSent.sort((a, b) => a - b);
    const expected = licenses.reduce(
      (sum, _l, i) =>
        sum + Math.floor(CONNECTIONS / licenses.length) + (i < CONNECTIONS % licenses.length ? 1 : 0),
      0,
    );
    log(
      `${REVOCATIONS} revocations, each followed by ~${followers} streams: ${latencies.length}/${expected} deliveries; ` +
        `from DELETE answered p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms, ` +
        `max ${latencies.at(-1).toFixed(1)} ms; from DELETE sent p50 ${pct(fromSent, 50).toFixed(1)} ms, ` +
        `p99 ${pct(fromSent, 99).toFixed(1)} ms`,
    );
    for (const request of opened) request.destroy();
  } finally {
    await platform.stop();
    await withPg(`${args['postgres-url']}/postgres`, (pg) =>
      pg.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`),
    );
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
