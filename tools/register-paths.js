// Resolves the workspace's `@licensing/*` aliases to the compiled libraries under dist/, from the
// same `paths` table tsc and jest use (tsconfig.base.json), so built services run with plain node:
//   node -r ./tools/register-paths.js dist/apps/gateway/src/main.js
const Module = require('node:module');
const path = require('node:path');
const { compilerOptions } = require('../tsconfig.base.json');

const dist = path.join(__dirname, '..', 'dist');
const aliases = new Map(
  Object.entries(compilerOptions.paths).map(([alias, [target]]) => [
    alias,
    path.join(dist, target.replace(/\.ts$/, '.js')),
  ]),
);

const resolve = Module._resolveFilename;
Module._resolveFilename = function resolveAlias(request, ...rest) {
  const target = aliases.get(request);
  return resolve.call(this, target ?? request, ...rest);
};
