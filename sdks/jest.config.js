// The SDKs' checks: the conformance vectors (regenerated and compared, and run by the JavaScript
// SDK), and each SDK's own suite run from jest so that `npm test` covers it.
module.exports = {
  ...require('../jest.preset.js'),
  displayName: 'sdks',
  rootDir: __dirname,
  testMatch: ['<rootDir>/**/*.spec.ts', '<rootDir>/**/*.int-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/build/', '/dist/'],
};
