module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'relay',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/src/**/*.int-spec.ts'],
};
