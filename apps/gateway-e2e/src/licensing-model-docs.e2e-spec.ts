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

/** Every entitlement body of the page: the `-d '…'` of each `POST $API/entitlements`. */
function entitlementBodies(): Array<Record<string, unknown>> {
  const page = readFileSync(DOC, 'utf8');
  return [...page.matchAll(/POST \$API\/entitlements[^\n]*\n?[^']*-d '([^']*)'/g)].map(
    (match) => JSON.parse(match[1]!) as Record<string, unknown>,
  );
}

/** The `-d '…'` body of the page's request to `path` (after `$API`), and the answer it shows. */
function requestOf(path: RegExp): { body: Record<string, unknown>; shown: string } {
  const page = readFileSync(DOC, 'utf8');
  const match = new RegExp(`POST \\$API${path.source}[^\\n]*\\n[^\\n]*?-d '([^']*)'\\n# ([^\\n]*)`).exec(
    page,
  );
  if (!match) throw new Error(`no request to ${path.source} in the page`);
  return { body: JSON.parse(match[1]!) as Record<string, unknown>, shown: match[2]! };
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
    const entitlements = entitlementBodies();
    expect(entitlements.map((body) => body['code'])).toEqual(['export.pdf']);
    for (const body of entitlements)
      expect((await org.api.post('/api/v1/entitlements', body)).status).toBe(201);
    const bodies = policyBodies(product.id);
    expect(bodies.map((body) => body['name'])).toEqual([
      'Perpetual',
      'Yearly',
      'Trial',
      'Workstation',
      'Team',
      'Two per machine',
      'Metered',
      'Pro',
    ]);
    const licenses: Record<string, Record<string, any>> = {};
    for (const body of bodies) {
      const policy = await org.api.post('/api/v1/policies', body);
      expect({ name: body['name'], status: policy.status }).toEqual({ name: body['name'], status: 201 });
      const license = await org.api.post('/api/v1/licenses', { policy_id: policy.body.id });
      expect(license.status).toBe(201);
      expect(license.body).toMatchObject({
        policy_id: policy.body.id,
        license_type: policy.body.license_type,
        max_seats: policy.body.max_machines,
        max_uses: policy.body.max_uses,
        entitlements: policy.body.entitlements,
      });
      if (policy.body.duration_days === null) expect(license.body.valid_until).toBeNull();
      licenses[body['name'] as string] = license.body;
    }
    expect(licenses['Metered']).toMatchObject({ max_uses: 10000 });
    expect(licenses['Pro']!.entitlements).toEqual(['export.pdf']);

    // The metered license counts as the page shows, with its license token.
    const metered = licenses['Metered']!;
    const token = (await org.api.post(`/api/v1/licenses/${metered.id}/tokens`, {})).body.token as string;
    const usage = requestOf(/\/licenses\/<LICENSE>\/usage/);
    const counted = await org.api.withKey(token).post(`/api/v1/licenses/${metered.id}/usage`, usage.body);
    expect(counted.status).toBe(200);
    expect(counted.body).toEqual(JSON.parse(usage.shown));

    // The Pro license passes the page's validate; a license of another policy lacks the entitlement.
    const check = requestOf(/\/licenses\/validate/);
    const validateWith = async (license: Record<string, any>) => {
      const own = (await org.api.post(`/api/v1/licenses/${license.id}/tokens`, {})).body.token as string;
      const body = { ...check.body, key: license.serial };
      return (await org.api.withKey(own).post('/api/v1/licenses/validate', body)).body;
    };
    expect(await validateWith(licenses['Pro']!)).toMatchObject({ valid: true, code: 'VALID' });
    expect(check.shown).toContain('"code": "VALID"');
    expect((await validateWith(licenses['Yearly']!)).code).toBe('ENTITLEMENTS_MISSING');
  });
});
