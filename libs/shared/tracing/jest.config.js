module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'shared-tracing',
  rootDir: __dirname,
  testMatch: [
    '<rootDir>/src/**/*.spec.ts',
    '<rootDir>/src/**/*.int-spec.ts',
    '<rootDir>/src/**/*.e2e-spec.ts',
  ],
};
