// The benchmarks' view of the process harness (libs/shared/testing/src/processes.js, the one the
// tests use): the platform as `npm start` runs it, on its own bus namespace, database, Redis keys
// and ports, its processes children of the benchmark (their PIDs are what the CPU columns read),
// labelled for those columns, and run with the Node flags of BENCH_NODE_ARGS.
const harness = require('../../libs/shared/testing/src/processes');
const { waitFor } = require('../../libs/shared/testing/src/wait-for');

/** Short labels for the table's CPU column. */
const SHORT = {
  gateway: 'gw',
  'product-service': 'prod',
  'license-service': 'lic',
  'revocation-service': 'rev',
  'analytics-service': 'ana',
  'webhook-service': 'hook',
};

// Node flags for the benchmark's processes (NODE_OPTIONS refuses --cpu-prof), e.g. to profile:
// BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench -- --scenarios verify
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

module.exports = {
  ...harness,
  waitFor,
  startPlatform: (settings) => harness.startPlatform({ labels: SHORT, nodeArgs, ...settings }),
  startProcesses: (entries, logFile) => harness.startProcesses(entries, logFile, { nodeArgs }),
};
