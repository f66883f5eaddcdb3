// The end-to-end suite once more, with the gateway's direct routes off: Nest's pipeline serves every
// route. `@Direct()` is only an optimisation, so every answer must be the same both ways.
const suite = require('./jest.config.js');

module.exports = {
  ...suite,
  displayName: 'gateway-e2e (direct routes off)',
  testMatch: ['<rootDir>/src/**/*.e2e-spec.ts'],
  // The browser console's spec drives the UI; the API calls it makes are covered by the API's own
  // specs, which do run here. It is the slowest spec but one (~40 s), so it runs once.
  testPathIgnorePatterns: ['/node_modules/', '/console\\.e2e-spec\\.ts$'],
  setupFiles: [...(suite.setupFiles ?? []), '<rootDir>/src/support/direct-routes-off.ts'],
};
