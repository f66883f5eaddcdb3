module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'license-verifier',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/src/**/*.int-spec.ts'],
};
