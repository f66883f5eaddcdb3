// `npm test` runs every project's tests in one jest run; each project keeps its own jest.config.js
// so that `npx nx test <project>` runs one of them alone.
module.exports = {
  projects: [
    '<rootDir>/apps/*/jest.config.js',
    '<rootDir>/libs/*/jest.config.js',
    '<rootDir>/libs/shared/*/jest.config.js',
    '<rootDir>/tools/jest.config.js',
  ],
};
