import { Client } from 'pg';
import { ApiResponse, TEST_DATABASE_URL, waitFor } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, productWithKeyPair } from './support/fixtures';

/** a backing service that is down is a 503 `unavailable`, safe to retry, not a hang or a 500. */
describe('a backing service that is down', () => {
  let stack: TestStack;
  let org: TestOrganization;

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
  });
  afterAll(() => stack.close());

  it('answers 503 unavailable at once while the service is stopped, and 200 again once it is back', async () => {
    const path = '/v1/analytics/versions?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z';
    expect((await org.api.get(path)).status).toBe(200);

    await stack.stopService('analytics-service');
    const started = Date.now();
    const down = await org.api.get(path);
    expect(down.status).toBe(503);
    expect(down.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(down.body).toMatchObject({ status: 503, code: 'unavailable', title: 'Service Unavailable' });
    expect(Date.now() - started).toBeLessThan(1_000); // no responders: no waiting for the bus timeout

    await stack.startService('analytics-service');
    expect((await org.api.get(path)).status).toBe(200);
  });

  /**
   * Holds a row lock so that `request` waits for it inside its transaction, then terminates the
   * PostgreSQL backend that waits (as a restart, a failover or an operator would): the statement
   * fails with "terminating connection due to administrator command" under the request.
   */
  async function cutUnderLock(lockSql: string, params: unknown[], request: () => Promise<ApiResponse>) {
    const locker = new Client({ connectionString: TEST_DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      expect((await locker.query(lockSql, params)).rowCount).toBe(1);
      const answer = request();
      await waitFor(
        async () =>
          ((
            await locker.query(
              `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
            )
          ).rowCount ?? 0) > 0,
        { what: 'the request to wait for the row lock' },
      );
      return await answer;
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  }

  it('answers 503 unavailable, not 500, when a service loses its database connection under a request', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id });

    const cut = await cutUnderLock(
      'SELECT 1 FROM license.licenses WHERE id = $1 FOR UPDATE',
      [license.id],
      () => org.api.delete(`/api/v1/licenses/${license.id}`),
    );
    expect(cut.status).toBe(503);
    expect(cut.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(cut.body).toMatchObject({ status: 503, code: 'unavailable' });

    // The revocation did not happen, and the retry it was told to make succeeds.
    expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.status).toBe('active');
    expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
    expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.status).toBe('revoked');
  });

  it('answers 503 unavailable, not 500, when the gateway loses its database connection under a request', async () => {
    const { key } = await apiKeyWithScopes(org.api, ['read']);

    const cut = await cutUnderLock('SELECT 1 FROM identity.api_keys WHERE id = $1 FOR UPDATE', [key.id], () =>
      org.api.delete(`/api/v1/api-keys/${key.id}`),
    );
    expect(cut.status).toBe(503);
    expect(cut.body).toMatchObject({ status: 503, code: 'unavailable' });

    expect((await org.api.delete(`/api/v1/api-keys/${key.id}`)).status).toBe(200);
  });
});
