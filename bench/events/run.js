#!/usr/bin/env node
// What a license event costs the platform after the change that made it was answered: CPU per
// event, per process, while the event's consumers (the revocation cache, the webhook fan-out, and
// the gateway's push feed when a stream is open) take it in. Starts the platform on a throw-away
// database and bus namespace, makes one license through the API, then publishes copies of its real
// `license.created` event (fresh ids and versions) straight to the events stream and waits until
// every consumer has them: with no push stream open, and with one open on the gateway (its license
// events feed read), alternating, after a warm-up.
//   npm run bench:events -- [--events 20000]
//   npm run bench:events -- --smoke          (500 events, CI)
const { randomBytes, randomUUID } = require('node:crypto');
const fs = require('node:fs');
const { get } = require('node:http');
const path = require('node:path');
const { parseArgs } = require('node:util');
require('../../tools/register-paths');
const { Client } = require('pg');
const { connect, headers: natsHeaders } = require('nats');
const { apiClient, deleteStreams } = require('../lib/clients');
const { cpuSampler } = require('../lib/cpu');
const { build, createOrganization, startPlatform, waitFor } = require('../lib/platform');

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    smoke: { type: 'boolean', default: false },
  },
});
const EVENTS = args.smoke ? 500 : Number(args.events);
const SERVER = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const UNIQUE = randomBytes(5).toString('hex');
// Named like the test suite's databases, so that an interrupted run is swept by the next `npm test`.
const DATABASE = `licensing_test_${Date.now().toString(36)}_bev${UNIQUE}`;
const NAMESPACE = `t${UNIQUE}`;
const PUBLISH_WINDOW = 500;

const log = (line) => process.stdout.write(`${line}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function withPg(work) {
  const pg = new Client({ connectionString: `${SERVER}/postgres` });
  await pg.connect();
  try {
    return await work(pg);
  } finally {
    await pg.end();
  }
}

/** A push stream on the gateway, following a serial no event names: the feed read, nothing sent. */
function openPushStream(baseUrl, apiKey) {
  return new Promise((resolve, reject) => {
    const request = get(
      `${baseUrl}/api/v1/licenses/events?serials=LIC-NOT-FOLLOWED-0000000000000000`,
      { agent: false, headers: { authorization: `Bearer ${apiKey}` } },
      (response) => {
        if (response.statusCode !== 200) reject(new Error(`push stream: ${response.statusCode}`));
        response.setEncoding('utf8');
        let text = '';
        response.on('data', (chunk) => {
          text += chunk;
          if (text.includes('event: ready')) resolve({ close: () => request.destroy() });
        });
      },
    );
    request.on('error', reject);
  });
}

async function main() {
  build();
  const resultsDir = path.join(__dirname, '..', 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  await withPg((pg) => pg.query(`CREATE DATABASE "${DATABASE}"`));
  const databaseUrl = `${SERVER}/${DATABASE}`;
  let platform;
  let nc;
  try {
    platform = await startPlatform({
      databaseUrl,
      namespace: NAMESPACE,
      natsUrl: NATS_URL,
      redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      logFile: path.join(resultsDir, 'events-platform.log'),
      // The gateway stops reading the feed as soon as the push stream closes, for the next idle round.
      env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', PUSH_FEED_IDLE_MS: '0' },
    });
    const org = createOrganization(`bench-events-${UNIQUE}`, databaseUrl);
    const api = apiClient(platform.url, org.adminKey);
    const keyPair = await api('POST', '/key-pairs', { name: 'bench-events' });
    const product = await api('POST', '/products', {
      name: 'Events',
      code: `events-${UNIQUE}`,
      key_pair_id: keyPair.id,
    });
    const license = await api('POST', '/licenses', {
      product_id: product.id,
      customer_email: 'ada@example.com',
      valid_days: 365,
    });

    nc = await connect({ servers: NATS_URL.split(','), name: 'bench-events' });
    const manager = await nc.jetstreamManager();
    // The contracts' own names (compiled by build() above).
    const { Streams, eventSubject } = require('@licensing/contracts');
    const { namespaced, streamName } = require('@licensing/shared/messaging');
    const stream = streamName(NAMESPACE, Streams.events.name);
    const subject = namespaced(NAMESPACE, eventSubject(org.id, 'license.created'));
    let created;
    await waitFor(
      async () => {
        created = await manager.streams.getMessage(stream, { last_by_subj: subject });
        return JSON.parse(Buffer.from(created.data).toString()).data.id === license.id;
      },
      { what: 'the license.created event', timeoutMs: 60_000, intervalMs: 200 },
    );
    const event = JSON.parse(Buffer.from(created.data).toString());
    log(`one license.created event: ${created.data.length} bytes; ${EVENTS} copies in each mode\n`);

    /**
     * Until every durable consumer of the stream has acknowledged everything, and a moment for the
     * rest (the gateway's feed is an ordered consumer without acknowledgements; one it stopped
     * reading lingers on the server with its pending count until the server drops it).
     */
    const drained = async () => {
      for (;;) {
        let left = 0;
        for (const info of await manager.consumers.list(stream).next())
          if (info.config.durable_name) left += info.num_pending + info.num_ack_pending;
        if (left === 0) return sleep(300);
        await sleep(100);
      }
    };
    const js = nc.jetstream();
    const shared = [
      { label: 'pg', comm: 'postgres' },
      { label: 'redis', comm: 'redis-server' },
      { label: 'nats', comm: 'nats-server' },
    ];
    const sampler = cpuSampler([...platform.processes, ...shared]);
    let version = event.serial_status.version;

    const publish = async (count) => {
      for (let sent = 0; sent < count; sent += PUBLISH_WINDOW) {
        const window = [];
        for (let i = sent; i < Math.min(count, sent + PUBLISH_WINDOW); i++) {
          const copy = {
            ...event,
            id: randomUUID(),
            serial_status: { ...event.serial_status, version: ++version },
          };
          const h = natsHeaders();
          h.set('Nats-Msg-Id', copy.id);
          window.push(js.publish(subject, JSON.stringify(copy), { headers: h }));
        }
        await Promise.all(window);
      }
      await drained();
    };
    const modes = { idle: { seconds: 0, spent: {} }, streaming: { seconds: 0, spent: {} } };
    const phase = async (mode, count) => {
      await drained();
      const stop = sampler.start();
      const started = Date.now();
      await publish(count);
      modes[mode].seconds += (Date.now() - started) / 1000;
      for (const [label, us] of Object.entries(stop()))
        modes[mode].spent[label] = (modes[mode].spent[label] ?? 0) + us;
    };

    // Warmed up first (JIT, pools, batch sizes), then the two modes alternate, half the events each time.
    await publish(Math.ceil(EVENTS / 4));
    for (let round = 0; round < 2; round++) {
      await phase('idle', EVENTS / 2);
      const push = await openPushStream(platform.url, org.adminKey);
      await phase('streaming', EVENTS / 2);
      push.close();
      await sleep(500);
    }
    const perEvent = (mode) =>
      Object.fromEntries(
        Object.entries(modes[mode].spent).map(([label, us]) => [label, Math.round(us / EVENTS)]),
      );
    const idle = { seconds: modes.idle.seconds, perEvent: perEvent('idle') };
    const streaming = { seconds: modes.streaming.seconds, perEvent: perEvent('streaming') };

    log(
      `| process | no push stream open (${idle.seconds.toFixed(1)} s) | one push stream open (${streaming.seconds.toFixed(1)} s) |`,
    );
    log('|---|--:|--:|');
    const labels = Object.keys(idle.perEvent).filter((label) => label !== 'loadgen');
    for (const label of labels) log(`| ${label} | ${idle.perEvent[label]} | ${streaming.perEvent[label]} |`);
    log(`| publisher (this process) | ${idle.perEvent.loadgen} | ${streaming.perEvent.loadgen} |`);
    const total = (perEvent) => labels.reduce((sum, label) => sum + perEvent[label], 0);
    log(
      `| **platform, servers included** | **${total(idle.perEvent)}** | **${total(streaming.perEvent)}** |`,
    );
    log('\nµs of CPU per event, from /proc; pg, redis and nats are every such process of the machine.');
  } finally {
    await nc?.close();
    await platform?.stop();
    await withPg((pg) => pg.query(`DROP DATABASE IF EXISTS "${DATABASE}" WITH (FORCE)`));
    await deleteStreams(NATS_URL, NAMESPACE);
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exitCode = 1;
});
