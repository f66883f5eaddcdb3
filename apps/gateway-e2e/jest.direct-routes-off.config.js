// The end-to-end suite once more, with the gateway's direct routes off: Nest's pipeline serves every
// route. `@Direct()` is only an optimisation, so every answer must be the same both ways.
const suite = require('./jest.config.js');

module.exports = {
  ...suite,
  displayName: 'gateway-e2e (direct routes off)',
  testMatch: ['<rootDir>/src/**/*.e2e-spec.ts'],
  setupFiles: [...(suite.setupFiles ?? []), '<rootDir>/src/support/direct-routes-off.ts'],
};
