module.exports = {
  ...require('../jest.preset.js'),
  displayName: 'deploy',
  rootDir: __dirname,
  testMatch: ['<rootDir>/*.spec.ts', '<rootDir>/*.int-spec.ts'],
};
