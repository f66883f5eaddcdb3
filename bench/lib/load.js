// One timed load with autocannon, and what it cost each process in CPU.
const autocannon = require('autocannon');

/**
 * `target`: {url, requests} (autocannon request objects, paths included). Answers req/s, latency,
 * failures (non-2xx, socket errors and timeouts together) and, for each process of `sampler`, µs
 * of CPU per request.
 */
async function load({ url, requests, connections, duration, sampler }) {
  const stop = sampler?.start();
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon({ url, requests, connections, duration, timeout: 10 }, (error, done) =>
      error ? reject(error) : resolve(done),
    );
    // Without a listener autocannon prints a progress bar to stderr.
    instance.on('error', () => undefined);
  });
  const spent = stop?.() ?? {};
  const total = result.requests.total;
  const cpu = {};
  for (const [label, us] of Object.entries(spent)) cpu[label] = total ? Math.round(us / total) : null;
  return {
    rps: Math.round(total / result.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: total,
    ok: result['2xx'],
    errors: result.non2xx + result.errors + result.timeouts,
    cpu,
  };
}

module.exports = { load };
