// What the soak samples every interval, for each process of the platform (by PID) and for the
// backing services it shares with the rest of the machine:
//
// - RSS (VmRSS of /proc/<pid>/status), open file descriptors (entries of /proc/<pid>/fd), and
//   among them the TCP connections to PostgreSQL, Redis and NATS (socket inodes matched in
//   /proc/net/tcp and tcp6 by the peer's port), and CPU (utime + stime of /proc/<pid>/stat);
// - from the process's /metrics (prom-client's defaults): event-loop delay p99 and max over the
//   interval (prom-client's monitorEventLoopDelay histogram, reset at every scrape; it samples with
//   a 10 ms timer and reports the whole period, so 10 ms is taken off), heap used, active handles;
// - Redis `connected_clients` (INFO clients: every client of the server, other work included),
//   the keys of the soak's namespace and those of them without expiry; PostgreSQL connections to
//   the soak's database (pg_stat_activity, the sampler's own left out) and the database's size.
const fs = require('node:fs');
const Redis = require('ioredis');
const { Client } = require('pg');

/** prom-client's event-loop monitor timer (defaultMetrics' eventLoopMonitoringPrecision). */
const MONITOR_RESOLUTION_MS = 10;
const TICK_US = 10_000;
const MiB = 1024 * 1024;

function rssMiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
  return Number((kb / 1024).toFixed(1));
}

function cpuUs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

/** Socket inode → the peer it is connected to (`pg`, `redis`, `nats`, `listen` or `tcp`). */
function tcpPeers(ports) {
  const peers = new Map();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const remotePort = parseInt(fields[2].split(':')[1], 16);
      const listening = fields[3] === '0A';
      peers.set(fields[9], listening ? 'listen' : (ports[remotePort] ?? 'tcp'));
    }
  }
  return peers;
}

/** Open descriptors of `pid`, and its TCP connections by peer. */
function descriptors(pid, peers) {
  const dir = `/proc/${pid}/fd`;
  const entries = fs.readdirSync(dir);
  const sockets = { pg: 0, redis: 0, nats: 0 };
  for (const entry of entries) {
    let target;
    try {
      target = fs.readlinkSync(`${dir}/${entry}`);
    } catch {
      continue; // closed meanwhile
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    const peer = inode && peers.get(inode);
    if (peer in sockets) sockets[peer]++;
  }
  return { fds: entries.length, sockets };
}

/** The values of the metrics named in `names` from Prometheus' text format (unlabelled series). */
function parseMetrics(text, names) {
  const values = {};
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ');
    const name = line.slice(0, space);
    if (names.includes(name)) values[name] = Number(line.slice(space + 1));
  }
  return values;
}

const METRICS = [
  'nodejs_eventloop_lag_p99_seconds',
  'nodejs_eventloop_lag_max_seconds',
  'nodejs_heap_size_used_bytes',
  'nodejs_active_handles_total',
];

async function scrape(url) {
  try {
    const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) });
    if (!response.ok) return undefined;
    return parseMetrics(await response.text(), METRICS);
  } catch {
    return undefined;
  }
}

const delayMs = (seconds) =>
  seconds === undefined ? null : Number(Math.max(0, seconds * 1000 - MONITOR_RESOLUTION_MS).toFixed(2));

/**
 * A sampler of `processes` ({label, pid, url}); `database` on `postgresUrl`, Redis keys under
 * `namespace`. `prime()` scrapes once so that the first sample's event-loop figures cover only
 * its own interval; `sample()` returns one sample; `close()` ends its connections.
 */
async function startSampler({ processes, postgresUrl, database, redisUrl, namespace, ports }) {
  const pg = new Client({ connectionString: `${postgresUrl}/${database}`, application_name: 'soak-sampler' });
  await pg.connect();
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const lastCpu = new Map();
  let lastAt = performance.now();

  const prime = async () => {
    await Promise.all(processes.map((p) => scrape(p.url)));
    for (const p of processes) lastCpu.set(p.pid, cpuUs(p.pid));
    lastAt = performance.now();
  };

  async function sample() {
    const now = performance.now();
    const elapsedUs = (now - lastAt) * 1000;
    lastAt = now;
    const peers = tcpPeers(ports);
    const metrics = await Promise.all(processes.map((p) => scrape(p.url)));
    const perProcess = {};
    processes.forEach((p, i) => {
      try {
        const { fds, sockets } = descriptors(p.pid, peers);
        const cpu = cpuUs(p.pid);
        const m = metrics[i] ?? {};
        perProcess[p.label] = {
          rss_mib: rssMiB(p.pid),
          fds,
          pg_sockets: sockets.pg,
          redis_sockets: sockets.redis,
          nats_sockets: sockets.nats,
          cpu_pct: Number(((100 * (cpu - (lastCpu.get(p.pid) ?? cpu))) / elapsedUs).toFixed(1)),
          el_p99_ms: delayMs(m.nodejs_eventloop_lag_p99_seconds),
          el_max_ms: delayMs(m.nodejs_eventloop_lag_max_seconds),
          heap_mib:
            m.nodejs_heap_size_used_bytes === undefined
              ? null
              : Number((m.nodejs_heap_size_used_bytes / MiB).toFixed(1)),
          handles: m.nodejs_active_handles_total ?? null,
        };
        lastCpu.set(p.pid, cpu);
      } catch {
        perProcess[p.label] = null; // exited
      }
    });
    const { rows } = await pg.query(
      `SELECT count(*)::int AS connections,
              count(*) FILTER (WHERE state = 'active')::int AS active,
              count(*) FILTER (WHERE state LIKE 'idle in transaction%')::int AS idle_in_transaction,
              pg_database_size($1) AS bytes
         FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [database],
    );
    const info = await redis.info('clients');
    return {
      processes: perProcess,
      pg_connections: rows[0].connections,
      pg_active: rows[0].active,
      pg_idle_in_transaction: rows[0].idle_in_transaction,
      db_mib: Number((Number(rows[0].bytes) / MiB).toFixed(1)),
      redis_clients: Number(/^connected_clients:(\d+)/m.exec(info)?.[1]),
      ...(await countKeys(redis, `${namespace}:*`)),
    };
  }

  /** Every table of the soak's database: live and dead rows, and size with indexes and TOAST. */
  async function tables() {
    const { rows } = await pg.query(
      `SELECT schemaname || '.' || relname AS name, n_live_tup::int AS live, n_dead_tup::int AS dead,
              pg_total_relation_size(relid) AS bytes
         FROM pg_stat_user_tables ORDER BY name`,
    );
    return rows.map(({ name, live, dead, bytes }) => ({
      name,
      live,
      dead,
      mib: Number((Number(bytes) / MiB).toFixed(2)),
    }));
  }

  /** Whether PostgreSQL vacuums on its own (it is off on some CI machines). */
  const autovacuum = async () => (await pg.query('SHOW autovacuum')).rows[0].autovacuum;

  return {
    prime,
    sample,
    tables,
    autovacuum,
    close: async () => {
      await pg.end().catch(() => undefined);
      redis.disconnect();
    },
  };
}

/** Keys matching `pattern`, and how many of them have no expiry (they stay until deleted). */
async function countKeys(redis, pattern) {
  let keys = 0;
  let persistent = 0;
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys += batch.length;
    if (batch.length === 0) continue;
    const pipeline = redis.pipeline();
    for (const key of batch) pipeline.ttl(key);
    for (const [, ttl] of await pipeline.exec()) if (ttl === -1) persistent++;
  } while (cursor !== '0');
  return { redis_keys: keys, redis_persistent_keys: persistent };
}

module.exports = { startSampler, scrape, delayMs };
