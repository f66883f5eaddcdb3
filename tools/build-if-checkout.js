// Compiles the workspace when run from a checkout (the compilers installed), and builds the console
// when its sources changed, so that a command always runs the current sources; in the production
// image (no compilers, dist/ already built) it does nothing. Exits with status 1 if compiling fails.
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { buildConsole } = require('./build-console');

const root = path.join(__dirname, '..');

function buildIfCheckout() {
  try {
    require.resolve('@swc/core');
  } catch {
    return;
  }
  const build = spawnSync(process.execPath, [path.join(__dirname, 'compile.js')], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
  if (!buildConsole()) process.exit(1);
}

module.exports = { buildIfCheckout, root };
