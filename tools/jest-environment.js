// Every test file's environment: Node's, plus a check once the file is done, after its own
// afterAll hooks. Any process the file started and did not stop (a redis-server, a nats-server, a
// service, a browser) is named and killed, so that it cannot outlive its test in a jest worker.
const { TestEnvironment } = require('jest-environment-node');
const path = require('node:path');
const { killLeakedChildren } = require('./leaked-processes');

class LicensingTestEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testFile = path.relative(path.join(__dirname, '..'), context.testPath);
  }

  async teardown() {
    killLeakedChildren(this.testFile);
    await super.teardown();
  }
}

module.exports = LicensingTestEnvironment;
