// `npm test` runs every project's tests in one jest run; each project keeps its own jest.config.js
// so that `npx nx test <project>` runs one of them alone.
module.exports = {
  // Global options (not per project): integration and end-to-end tests boot real services.
  testTimeout: 30_000,
  globalSetup: '<rootDir>/tools/jest-global-setup.js',
  // Names and kills any process a test left running (see the file).
  globalTeardown: '<rootDir>/tools/jest-global-teardown.js',
  // A handle a test left open (a socket, a timer) must not keep CI waiting after the summary.
  forceExit: true,
  // Two test files at a time. Most of a file's time is spent waiting on servers, so two at once
  // take little more than one: CI time nearly halves. Files cannot see each other's data: each has
  // its own database, bus namespace and Redis keys (libs/shared/testing/src/environment.ts), and
  // servers of its own on free ports.
  maxWorkers: 2,
  // The longest files first, even on a fresh clone with no timings cached (see the file).
  testSequencer: '<rootDir>/tools/jest-sequencer.js',
  projects: [
    '<rootDir>/apps/*/jest.config.js',
    '<rootDir>/libs/*/jest.config.js',
    '<rootDir>/libs/shared/*/jest.config.js',
    '<rootDir>/tools/jest.config.js',
    '<rootDir>/sdks/jest.config.js',
  ],
};
