import { Client } from 'pg';
import { randomBytes } from 'node:crypto';
import { ensureDatabase } from './data-source';
import { TEST_ADMIN_DATABASE_URL, testDatabaseUrl } from '@licensing/shared/testing';

const admin = TEST_ADMIN_DATABASE_URL;

describe('ensureDatabase', () => {
  const name = `licensing_test_ensure_${randomBytes(4).toString('hex')}`;

  afterAll(async () => {
    const client = new Client({ connectionString: admin });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.end();
  });

  it('creates a missing database once, even when every service of a fresh stack asks at the same moment', async () => {
    const url = testDatabaseUrl(name);
    await Promise.all(Array.from({ length: 8 }, () => ensureDatabase(url)));
    const client = new Client({ connectionString: url });
    await client.connect();
    expect((await client.query('SELECT current_database() AS db')).rows).toEqual([{ db: name }]);
    await client.end();
    await expect(ensureDatabase(url)).resolves.toBeUndefined();
  });

  it('refuses a database name that is not a plain identifier', async () => {
    await expect(ensureDatabase(testDatabaseUrl('x";drop'))).rejects.toThrow(/Refusing/);
  });
});
