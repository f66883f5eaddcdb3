#!/usr/bin/env node
// Operator commands. `npm run cli -- org create "Acme"` creates an organization and prints its
// first admin API key (shown only this once). Reads the gateway's settings (DATABASE_URL, ...).
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
// In a checkout, compile first; in the production image (no TypeScript, dist/ already built) skip it.
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  tsc = undefined;
}
if (tsc) {
  const build = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

require('./register-paths');
require(path.join(root, 'dist/apps/gateway/src/cli.js'))
  .runCli(process.argv.slice(2))
  .then((code) => process.exit(code));
