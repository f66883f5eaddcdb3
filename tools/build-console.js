#!/usr/bin/env node
// Builds the browser console (apps/console, Vite) into dist/apps/console when that output is missing
// or older than its sources, so `npm start` and the tests serve the current console without a step
// of their own. The build goes to a directory of its own first and then replaces the old output,
// so a gateway serving it never sees it half written. In the production image (no Vite) it does
// nothing: the image built it.
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, renameSync, rmSync, statSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const source = path.join(root, 'apps/console');
const output = path.join(root, 'dist/apps/console');
/** What the build reads besides apps/console: the versions of Vite, Preact and uPlot. */
const INPUTS = [source, path.join(root, 'package-lock.json')];

function newestChange(file) {
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(file)
    .filter((name) => name !== 'node_modules' && !/\.spec\.ts$/.test(name))
    .reduce((newest, name) => Math.max(newest, newestChange(path.join(file, name))), stat.mtimeMs);
}

/** True when dist/apps/console/index.html exists and is newer than every input. */
function isFresh() {
  const index = path.join(output, 'index.html');
  if (!existsSync(index)) return false;
  const built = statSync(index).mtimeMs;
  return INPUTS.every((input) => !existsSync(input) || newestChange(input) <= built);
}

/** Builds if needed; returns false (with Vite's output on stderr) when the build fails. */
function buildConsole({ force = false } = {}) {
  let vite;
  try {
    vite = path.join(path.dirname(require.resolve('vite/package.json')), 'bin/vite.js');
  } catch {
    return true;
  }
  if (!force && isFresh()) return true;
  const staging = `${output}.${process.pid}.tmp`;
  const result = spawnSync(
    process.execPath,
    [vite, 'build', '--config', path.join(source, 'vite.config.mjs'), '--outDir', staging],
    { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (result.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    return false;
  }
  const old = `${output}.${process.pid}.old`;
  if (existsSync(output)) renameSync(output, old);
  renameSync(staging, output);
  rmSync(old, { recursive: true, force: true });
  return true;
}

module.exports = { buildConsole, consoleOutput: output };

if (require.main === module) {
  process.exit(buildConsole({ force: process.argv.includes('--force') }) ? 0 : 1);
}
