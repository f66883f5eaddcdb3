// Open-loop load at a fixed rate, for latency under normal load.
//
// Why not autocannon's `overallRate` (autocannon 8.0.0): each connection sends its share of the
// rate back to back at the start of every second, then waits. The load comes in bursts as wide as
// the connections, so its latency is that of a burst, not of a steady rate. Its latency runs from
// when a request is written, so a request held back behind a slow answer never shows the wait.
// Its correction for that (`recordValueWithExpectedInterval(latency, Math.ceil(1 / rate))`) takes
// 1 ms as the interval between requests, whatever the rate. Each answer of L ms then adds L − 1
// made-up values from 1 to L − 1 ms to the histogram: the percentiles say nothing.
//
// Here every request has a due time on an even schedule (`rate` per second). It leaves at that
// time, on a free keep-alive connection, whatever the earlier answers do. Its latency runs from
// its due time to the end of its answer. A request that waits for a connection, or for the
// harness's own event loop, counts that wait: there is no coordinated omission to correct.
//
// The client is a few raw sockets with a minimal HTTP/1.1 reader, as autocannon's is. Node's
// http client cost the harness 300–470 µs of CPU per request here, autocannon's about 50: on two
// shared cores that difference would show in every latency.
const net = require('node:net');
const { performance } = require('node:perf_hooks');

/** One HTTP/1.1 keep-alive connection, one request at a time; `onAnswer(status, body)` or `onClose(inFlight)`. */
function connection(target, { timeout, onAnswer, onClose }) {
  const socket = net.connect(Number(target.port), target.hostname);
  socket.setNoDelay(true);
  let buffer = Buffer.alloc(0);
  let head; // { status, length, chunked } of the answer being read
  let busy = false;
  const answered = (body) => {
    const { status } = head;
    head = undefined;
    busy = false;
    socket.setTimeout(0);
    onAnswer(status, body);
  };
  // Reads as much of the answer as has arrived: its head, then a Content-Length or chunked body.
  const read = () => {
    if (!head) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const text = buffer.toString('latin1', 0, end);
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text);
      head = {
        status: Number(text.slice(9, 12)),
        length: length ? Number(length[1]) : undefined,
        chunked: /\r\ntransfer-encoding:\s*chunked/i.test(text),
      };
      buffer = buffer.subarray(end + 4);
      if (head.length === undefined && !head.chunked) head.length = 0;
    }
    if (!head.chunked) {
      if (buffer.length < head.length) return;
      const body = buffer.subarray(0, head.length);
      buffer = buffer.subarray(head.length);
      return answered(body);
    }
    // Chunked: every chunk must be in before the answer is read.
    const chunks = [];
    let at = 0;
    for (;;) {
      const line = buffer.indexOf('\r\n', at);
      if (line < 0) return;
      const size = parseInt(buffer.toString('latin1', at, line), 16);
      if (buffer.length < line + 2 + size + 2) return;
      if (size === 0) {
        buffer = buffer.subarray(line + 4);
        return answered(Buffer.concat(chunks));
      }
      chunks.push(buffer.subarray(line + 2, line + 2 + size));
      at = line + 2 + size + 2;
    }
  };
  socket.on('data', (chunk) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    read();
  });
  socket.on('timeout', () => socket.destroy());
  socket.on('error', () => undefined);
  socket.on('close', () => onClose(busy));
  return {
    send(bytes) {
      busy = true;
      socket.setTimeout(timeout);
      socket.write(bytes);
    },
    destroy: () => socket.destroy(),
  };
}

/**
 * Up to `connections` connections to `url`. `submit(bytes, done)` sends on a free one, or queues
 * the request until one is free; `done(status, body)` gets status 0 if the connection failed.
 */
function connectionPool(url, { connections, timeout }) {
  const target = new URL(url);
  const idle = []; // the `next` of each free connection
  const queue = [];
  const all = new Set();
  const open = () => {
    let job;
    const next = () => {
      job = queue.shift();
      if (job) conn.send(job.bytes);
      else idle.push(next);
    };
    const conn = connection(target, {
      timeout,
      onAnswer(status, body) {
        const finished = job;
        next();
        finished.done(status, body);
      },
      onClose(inFlight) {
        all.delete(conn);
        const index = idle.indexOf(next);
        if (index >= 0) idle.splice(index, 1);
        if (inFlight && job) job.done(0, Buffer.alloc(0));
        if (queue.length > 0 && all.size < connections) open();
      },
    });
    all.add(conn);
    next();
  };
  return {
    submit(bytes, done) {
      queue.push({ bytes, done });
      const next = idle.pop();
      if (next) next();
      else if (all.size < connections) open();
    },
    close() {
      for (const conn of all) conn.destroy();
    },
  };
}

/** The bytes of one request: as autocannon writes them (keep-alive, Content-Length when a body). */
function requestBytes(target, { method = 'GET', path, headers = {}, body }) {
  const payload = body === undefined ? undefined : Buffer.from(body);
  let text = `${method} ${path} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: keep-alive\r\n`;
  for (const [name, value] of Object.entries(headers)) text += `${name}: ${value}\r\n`;
  if (payload) text += `Content-Length: ${payload.length}\r\n`;
  text += '\r\n';
  return payload ? Buffer.concat([Buffer.from(text, 'latin1'), payload]) : Buffer.from(text, 'latin1');
}

/**
 * One round of `duration` seconds at `rate` requests per second against `url`. `requests` are
 * the scenario's autocannon request objects, one request per round trip (no sequences). Answers
 * the latencies of the 2xx answers (ms from due time), the errors (non-2xx, socket errors and
 * timeouts) and how late the harness sent its requests (ms after their due time).
 */
async function fixedRateRound({ url, requests, rate, duration, connections, timeout = 10 }) {
  if (requests.length !== 1) throw new Error('a fixed-rate load sends one request per round trip');
  const [template] = requests;
  const target = new URL(url);
  const pool = connectionPool(url, { connections, timeout: timeout * 1000 });
  const total = Math.max(1, Math.round(rate * duration));
  const interval = 1000 / rate;
  const latencies = [];
  const lags = [];
  let errors = 0;
  let skipped = 0;
  let pending = 0;
  let sent = 0;
  let allAnswered;
  const drained = new Promise((resolve) => (allAnswered = resolve));

  const send = (due) => {
    // As autocannon does: a copy of the request, given to setupRequest with a fresh context.
    const context = {};
    let req = { method: template.method, path: template.path, headers: { ...template.headers } };
    if (template.body !== undefined) req.body = template.body;
    if (template.setupRequest) req = template.setupRequest(req, context);
    if (!req) {
      skipped++;
      return;
    }
    pending++;
    lags.push(performance.now() - due);
    pool.submit(requestBytes(target, req), (status, body) => {
      if (status >= 200 && status < 300) latencies.push(performance.now() - due);
      else errors++;
      template.onResponse?.(status, body.toString(), context);
      pending--;
      if (pending === 0 && sent === total) allAnswered();
    });
  };

  // The schedule: request i is due at start + i × interval. Each wake-up sends every request due.
  const start = performance.now() + 5;
  await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * interval <= now) {
        const due = start + sent * interval;
        sent++;
        send(due);
      }
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
      else resolve();
    };
    setTimeout(tick, 5);
  });
  if (pending > 0) await drained;
  const seconds = (performance.now() - start) / 1000;
  pool.close();
  return { rate, seconds, requests: latencies.length + errors, skipped, errors, latencies, lags };
}

/** The value at quantile `q` of sorted `values` (nearest rank). */
function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

const ms = (value) => (value === null ? null : Number(value.toFixed(2)));

/**
 * Rounds of one side summed: p50, p99 and max over every request of every round, errors, and
 * each round's own p99. `lagP99` is how late the harness sent its requests: its own share.
 */
function summarizeFixed(rounds) {
  const latencies = rounds.flatMap((round) => round.latencies).sort((a, b) => a - b);
  const lags = rounds.flatMap((round) => round.lags).sort((a, b) => a - b);
  const seconds = rounds.reduce((sum, round) => sum + round.seconds, 0);
  const requests = rounds.reduce((sum, round) => sum + round.requests, 0);
  return {
    rate: rounds[0]?.rate,
    achieved: Math.round(requests / seconds),
    p50: ms(quantile(latencies, 0.5)),
    p99: ms(quantile(latencies, 0.99)),
    max: ms(latencies.at(-1) ?? null),
    requests,
    errors: rounds.reduce((sum, round) => sum + round.errors, 0),
    lagP99: ms(quantile(lags, 0.99)),
    rounds: rounds.map((round) =>
      ms(
        quantile(
          [...round.latencies].sort((a, b) => a - b),
          0.99,
        ),
      ),
    ),
  };
}

module.exports = { fixedRateRound, summarizeFixed };
