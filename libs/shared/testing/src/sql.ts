import { Client } from 'pg';
import { TEST_DATABASE_URL } from './environment';

/**
 * Runs SQL against the test database, for states the API cannot reach (a license past its
 * valid_until, for instance). A short-lived connection per call keeps tests independent.
 */
export async function sql<T = any>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * Moves a license's validity window into the past (valid_from two days ago, valid_until one day
 * ago), leaving its stored status `active` and its signed claims untouched.
 */
export async function expireLicenseInDatabase(licenseId: string): Promise<void> {
  const rows = await sql(
    `UPDATE license.licenses
        SET valid_from = now() - interval '2 days', valid_until = now() - interval '1 day'
      WHERE id = $1 RETURNING id`,
    [licenseId],
  );
  expect(rows).toHaveLength(1);
}
