#!/usr/bin/env node
// What autocannon's `overallRate` reports, beside the open-loop schedule of lib/fixed-rate.js, on
// one server. The server is a child process that spends 1 ms of CPU per request, one at a time.
// Each load runs 5 s with 50 connections: closed loop first, then at half that req/s three ways.
//
//   node bench/fixed-rate-demo.js
const { fork } = require('node:child_process');
const http = require('node:http');
const autocannon = require('autocannon');
const { fixedRateRound, summarizeFixed } = require('./lib/fixed-rate');

if (process.env.FIXED_RATE_DEMO_SERVER) {
  http
    .createServer((request, response) => {
      const until = performance.now() + 1;
      while (performance.now() < until);
      response.end('{}');
    })
    .listen(0, '127.0.0.1', function ready() {
      process.send(this.address().port);
    });
} else {
  const server = fork(__filename, { env: { ...process.env, FIXED_RATE_DEMO_SERVER: '1' } });
  server.on('message', (port) => {
    demo(`http://127.0.0.1:${port}`).finally(() => server.kill());
  });
}

async function demo(url) {
  const run = (options) =>
    new Promise((resolve, reject) =>
      autocannon({ url, connections: 50, duration: 5, ...options }, (error, result) =>
        error ? reject(error) : resolve(result),
      ),
    );
  const say = (line) => process.stdout.write(`${line}\n`);
  const closed = await run({});
  const rate = Math.round(closed.requests.average / 2);
  say(
    `closed loop: ${closed.requests.average} req/s, p50 ${closed.latency.p50} ms, p99 ${closed.latency.p99} ms`,
  );
  for (const [name, options] of [
    ['autocannon overallRate', { overallRate: rate }],
    [
      'autocannon overallRate, ignoreCoordinatedOmission',
      { overallRate: rate, ignoreCoordinatedOmission: true },
    ],
  ]) {
    const result = await run(options);
    say(
      `${name} at ${rate} req/s: p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms ` +
        `(${result.latency.totalCount} histogram values for ${result.requests.total} requests)`,
    );
  }
  const requests = [{ method: 'GET', path: '/' }];
  const open = summarizeFixed([await fixedRateRound({ url, requests, rate, duration: 5, connections: 50 })]);
  say(
    `open loop (lib/fixed-rate.js) at ${rate} req/s: p50 ${open.p50} ms, p99 ${open.p99} ms ` +
      `(harness send lag p99 ${open.lagP99} ms)`,
  );
}
