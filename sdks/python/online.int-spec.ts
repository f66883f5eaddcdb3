// The Python SDK's online client against the running platform. The platform runs in this process,
// as the gateway's end-to-end suite starts it (its services, its own database and bus namespace, a
// gateway on a free port). This spec makes what an admin makes: an organization, a product with a
// key pair, two licenses, a license token for the first, a `client` API key. Then pytest runs
// tests/test_online_e2e.py with their values in the environment: the README's walk-through as
// written, a sync whose answer is lost, a revocation, signed answers, a seat under the client key,
// and the token naming the other license. tests/test_outage_e2e.py runs in the same pytest: it
// cuts the platform off with a TCP relay, and watches the heartbeat thread and the grace period.
// tests/test_offline_e2e.py activates an air-gapped machine and releases its seat with the SDK's files.
import { apiKeyWithScopes, createLicense, productWithKeyPair } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from '../../apps/gateway-e2e/src/support/stack';
import { licenseWithToken, outageLicenses } from '../support/licenses';
import { ensurePython, pytest } from './run-python';

describe('the Python SDK online, against the running platform', () => {
  let stack: TestStack;
  let org: TestOrganization;

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
  }, 60_000);
  afterAll(() => stack?.close());

  it('runs the README walk-through, a retried sync, a revocation, an outage, an air-gapped seat, and refuses another license', async () => {
    const python = await ensurePython();
    // Seats lapse 3 s after the last heartbeat: the client's thread beats every 1.5 s.
    const { product } = await productWithKeyPair(org.api, { activation_heartbeat_interval: 3 });
    const publicKey = await org.api.get(`/api/v1/products/${product.id}/public-key`);
    expect(publicKey.status).toBe(200);
    const license = await createLicense(org.api, { product_id: product.id, max_seats: 3 });
    const other = await createLicense(org.api, { product_id: product.id, max_seats: 3 });
    const token = await org.api.post(`/api/v1/licenses/${license.id}/tokens`, { name: 'python-sdk' });
    expect(token.status).toBe(201);
    const clientKey = (await apiKeyWithScopes(org.api, ['client'])).key.key as string;
    const responseKeys = await org.api.get('/api/v1/organizations/current/response-keys');
    expect(responseKeys.status).toBe(200);
    const outage = await outageLicenses(org.api, product.id as string);
    const airGapped = await licenseWithToken(org.api, { product_id: product.id, max_seats: 1 });

    const files = ['tests/test_online_e2e.py', 'tests/test_outage_e2e.py', 'tests/test_offline_e2e.py'];
    const done = await pytest(python, ['-m', 'online', '-rs', ...files], {
      LICENSING_URL: stack.baseUrl,
      LICENSE_KEY: license.serial,
      LICENSE_TOKEN: token.body.token,
      PRODUCT_KEY: publicKey.body.public_key,
      LICENSING_E2E_LICENSE_ID: license.id,
      LICENSING_E2E_ADMIN_KEY: org.adminKey,
      LICENSING_E2E_CLIENT_KEY: clientKey,
      LICENSING_E2E_RESPONSE_KEYS: JSON.stringify(responseKeys.body),
      LICENSING_E2E_OTHER_KEY: other.serial,
      LICENSING_E2E_OTHER_ID: other.id,
      LICENSING_E2E_OUTAGE: JSON.stringify(outage),
      LICENSING_E2E_OFFLINE: JSON.stringify(airGapped),
    });
    expect(done.out).toMatch(/7 passed/);
    expect(done.out).not.toMatch(/skipped|failed|error/i);
  }, 300_000);
});
