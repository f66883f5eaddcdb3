// Timed loads with autocannon, what they cost each process in CPU, and their sum over rounds.
const autocannon = require('autocannon');

/**
 * One round: `requests` (autocannon request objects, paths included) against `url` for `duration`
 * seconds. Answers autocannon's raw result (latency histogram kept, so rounds can be summed) and
 * µs of CPU spent by each process of `sampler`.
 */
async function loadRound({ url, requests, connections, duration, sampler }) {
  const stop = sampler?.start();
  const raw = await new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, requests, connections, duration, timeout: 10, skipAggregateResult: true },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    // Without a listener autocannon prints a progress bar to stderr.
    instance.on('error', () => undefined);
  });
  return { raw, spent: stop?.() ?? {} };
}

/**
 * Rounds of one side summed: req/s over their total time, p50 and p99 of every request of every
 * round (the latency histograms are added, not averaged), failures (non-2xx, socket errors and
 * timeouts together), µs of CPU per request in each process, and each round's own req/s.
 */
function summarize(rounds, { url, connections }) {
  const merged = autocannon.aggregateResult(
    rounds.map((round) => round.raw),
    { url, connections },
  );
  const total = merged.requests.total;
  const seconds = rounds.reduce((sum, round) => sum + round.raw.duration, 0);
  const spent = {};
  for (const round of rounds)
    for (const [label, us] of Object.entries(round.spent)) spent[label] = (spent[label] ?? 0) + us;
  const cpu = {};
  for (const [label, us] of Object.entries(spent)) cpu[label] = total ? Math.round(us / total) : null;
  return {
    rps: Math.round(total / seconds),
    p50: merged.latency.p50,
    p99: merged.latency.p99,
    requests: total,
    ok: merged['2xx'],
    errors: merged.non2xx + merged.errors + merged.timeouts,
    cpu,
    rounds: rounds.map((round) => Math.round(round.raw.totalCompletedRequests / round.raw.duration)),
  };
}

/** A single timed load, summarized (the warm-ups, and callers that need no rounds). */
async function load(options) {
  return summarize([await loadRound(options)], options);
}

module.exports = { load, loadRound, summarize };
