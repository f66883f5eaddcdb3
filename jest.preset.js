// Shared jest settings: SWC compiles TypeScript with the options that compile the services
// (tools/swc-options.js), and the tsconfig path aliases resolve to library sources, exactly as tsc
// sees them.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');
const { swcOptions } = require('./tools/swc-options');

const moduleNameMapper = Object.fromEntries(
  Object.entries(compilerOptions.paths).map(([alias, [target]]) => [
    `^${alias.replace(/[/.]/g, '\\$&')}$`,
    path.join(__dirname, target),
  ]),
);

const swc = (syntax) => ['@swc/jest', { ...swcOptions(syntax), sourceMaps: 'inline' }];

// Dependencies published as ESM only. Node 20 loads them through require(esm); jest cannot, so
// they are compiled to CommonJS like our own sources.
const ESM_ONLY_PACKAGES = ['content-disposition'];

module.exports = {
  // Node's environment, which also kills any process a test file left running (see the file).
  testEnvironment: path.join(__dirname, 'tools/jest-environment.js'),
  // Integration and end-to-end tests boot real services against PostgreSQL and NATS.
  testTimeout: 30_000,
  // Every file's time in the log, not only the slow ones': where CI's time goes is read from there.
  slowTestThreshold: 0,
  moduleNameMapper,
  setupFilesAfterEnv: [path.join(__dirname, 'libs/shared/testing/src/jest-setup.ts')],
  transform: {
    '^.+\\.ts$': swc('typescript'),
    '^.+\\.js$': swc('ecmascript'),
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY_PACKAGES.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
