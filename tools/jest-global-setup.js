// Once per `npm test`: removes what earlier, interrupted test runs left behind: test databases and
// JetStream streams of test namespaces older than an hour, and the template databases of earlier
// runs. Each test file removes its own database and streams at the end; this only
// catches runs that were killed. A database is named for the time it was created
// (`licensing_test_<base-36 ms>_<random>`): another `npm test` running at the same time on the
// machine may have one that is between two connections, and must not lose it.
const { Client } = require('pg');
const { connect } = require('nats');
const infrastructure = require('../libs/shared/testing/src/infrastructure.json');

// The same servers, and the same overrides, as libs/shared/testing/src/environment.ts.
const POSTGRES_URL = process.env.TEST_POSTGRES_URL || infrastructure.postgres;
const NATS_URL = process.env.TEST_NATS_URL || infrastructure.nats;

const TEST_STREAM = /^t[0-9a-f]{10}_[A-Z_]+$/;
const HOUR_MS = 3_600_000;

module.exports = async function globalSetup() {
  const pg = new Client({ connectionString: `${POSTGRES_URL}/postgres` });
  await pg.connect();
  try {
    const { rows } = await pg.query(
      `SELECT datname FROM pg_database d
        WHERE datname LIKE 'licensing\\_test\\_%'
          AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`,
    );
    for (const { datname } of rows) {
      const createdAt = /^licensing_test_([0-9a-z]+)_/.exec(datname);
      if (createdAt && Date.now() - parseInt(createdAt[1], 36) < HOUR_MS) continue;
      await pg.query(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => undefined);
    }
    // Template databases of earlier runs (apps/gateway-e2e/src/support/test-database.ts): the
    // first file that needs one builds it again. One in use (a file copying it) refuses the drop.
    const templates = await pg.query(
      `SELECT datname FROM pg_database WHERE datname LIKE 'licensing\\_template\\_%'`,
    );
    for (const { datname } of templates.rows) {
      await pg.query(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => undefined);
    }
  } finally {
    await pg.end();
  }

  const nc = await connect({ servers: NATS_URL });
  try {
    const jsm = await nc.jetstreamManager();
    for await (const stream of jsm.streams.list()) {
      const { name } = stream.config;
      if (TEST_STREAM.test(name) && Date.now() - Date.parse(stream.created) > HOUR_MS) {
        await jsm.streams.delete(name).catch(() => false);
      }
    }
  } finally {
    await nc.close();
  }
};
