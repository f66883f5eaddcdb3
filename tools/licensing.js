#!/usr/bin/env node
// The `licensing` command line (apps/cli): `npx licensing --help` from the repository.
// In a checkout it compiles first, as tools/cli.js does; with dist/ already built it skips that.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
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
require(path.join(root, 'dist/apps/cli/src/index.js'))
  .runLicensingCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  })
  .then((code) => {
    process.exitCode = code;
  });
