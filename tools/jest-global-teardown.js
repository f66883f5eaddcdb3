// Once per `npm test`, after the last test file: every process a test started in jest's own
// process and did not stop is named and killed (tools/leaked-processes.js). Tests that run in
// jest's workers are checked file by file, by tools/jest-environment.js.
const { killLeakedChildren } = require('./leaked-processes');

module.exports = async function globalTeardown() {
  killLeakedChildren('A test');
};
