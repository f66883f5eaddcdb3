// The two ways the harness talks to the platform while it seeds: HTTP through the gateway, as any
// client does, and requests on the bus straight to a service's handler, in the wire format of
// Nest's NATS transport that the gateway's BusClient speaks (libs/shared/messaging/src/bus-client.ts).
const { randomUUID } = require('node:crypto');
const { connect, JSONCodec } = require('nats');
const { Client } = require('pg');

const codec = JSONCodec();

function apiClient(baseUrl, key) {
  return async function api(method, path, body, headers = {}) {
    const response = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
}

/**
 * Requests on the bus as a service receives them from the gateway: `{pattern, data: {ctx, data}, id}`,
 * answered `{id, response | err}`. No API key stands behind them, so (as for any bus call no key
 * made) the service records no audit entry; everything else is the handler's own code path.
 */
async function busClient(natsUrl, namespace) {
  const nc = await connect({ servers: natsUrl.split(','), name: 'bench-seed' });
  return {
    async send(subject, orgId, data) {
      const target = namespace ? `${namespace}.${subject}` : subject;
      const envelope = { ctx: { request_id: randomUUID(), org_id: orgId }, data };
      const reply = await nc.request(
        target,
        codec.encode({ pattern: target, data: envelope, id: randomUUID() }),
        { timeout: 30_000 },
      );
      const packet = codec.decode(reply.data);
      if (packet.err !== undefined && packet.err !== null)
        throw new Error(`${subject}: ${JSON.stringify(packet.err)}`);
      return packet.response;
    },
    close: () => nc.close(),
    nats: nc,
  };
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` at a time. */
async function pool(count, concurrency, task) {
  let next = 0;
  const results = new Array(count);
  async function worker() {
    while (next < count) {
      const i = next++;
      results[i] = await task(i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

/** Deletes the JetStream streams of a bus namespace (`<prefix>_…`). */
async function deleteStreams(natsUrl, prefix) {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await nc.jetstreamManager();
    for await (const stream of jsm.streams.list()) {
      if (stream.config.name.startsWith(`${prefix}_`)) await jsm.streams.delete(stream.config.name);
    }
  } finally {
    await nc.close();
  }
}

/** One PostgreSQL connection for `work`, closed after it; `applicationName` names it in pg_stat_activity. */
async function withPg(url, work, { applicationName } = {}) {
  const client = new Client({ connectionString: url, application_name: applicationName });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

module.exports = { apiClient, busClient, deleteStreams, pool, withPg };
