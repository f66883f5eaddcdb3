import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { productWithKeyPair } from './support/fixtures';

const DOC = join(__dirname, '../../../docs/licensing-model.md');

/** Every policy body of the page: the `-d "…"` of each `POST $API/policies`, as the shell reads it. */
function policyBodies(productId: string): Array<Record<string, unknown>> {
  const page = readFileSync(DOC, 'utf8');
  const bodies: Array<Record<string, unknown>> = [];
  for (const match of page.matchAll(/POST \$API\/policies[^\n]*\n?[^"]*-d "((?:[^"\\]|\\.)*)"/g)) {
    const text = match[1]!.replace(/\\"/g, '"').replace(/\$PRODUCT/g, productId);
    bodies.push(JSON.parse(text) as Record<string, unknown>);
  }
  return bodies;
}

describe('docs/licensing-model.md', () => {
  let stack: TestStack;
  let org: TestOrganization;

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
  });
  afterAll(() => stack.close());

  it('creates every policy the page shows, as written, and a license from each', async () => {
    const { product } = await productWithKeyPair(org.api);
    const bodies = policyBodies(product.id);
    expect(bodies.map((body) => body['name'])).toEqual([
      'Perpetual',
      'Yearly',
      'Trial',
      'Workstation',
      'Team',
      'Two per machine',
    ]);
    for (const body of bodies) {
      const policy = await org.api.post('/api/v1/policies', body);
      expect({ name: body['name'], status: policy.status }).toEqual({ name: body['name'], status: 201 });
      const license = await org.api.post('/api/v1/licenses', { policy_id: policy.body.id });
      expect(license.status).toBe(201);
      expect(license.body).toMatchObject({
        policy_id: policy.body.id,
        license_type: policy.body.license_type,
        max_seats: policy.body.max_machines,
      });
      if (policy.body.duration_days === null) expect(license.body.valid_until).toBeNull();
    }
  });
});
