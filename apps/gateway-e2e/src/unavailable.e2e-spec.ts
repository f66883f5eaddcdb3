import { TestOrganization, TestStack, startStack } from './support/stack';

/** API.md §2: a backing service that is down is a 503 `unavailable`, safe to retry, not a hang or a 500. */
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
});
