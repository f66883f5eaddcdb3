// Compiles the workspace when run from a checkout (TypeScript installed), and builds the console
// when its sources changed, so that a command always runs the current sources; in the production
// image (no TypeScript, dist/ already built) it does nothing. Exits with the compiler's status if
// compiling fails.
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { buildConsole } = require('./build-console');

const root = path.join(__dirname, '..');

function buildIfCheckout() {
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc');
  } catch {
    return;
  }
  const build = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
  if (!buildConsole()) process.exit(1);
}

module.exports = { buildIfCheckout, root };
