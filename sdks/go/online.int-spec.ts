// The Go SDK's online client against the running platform. The platform runs in this process, as
// the gateway's end-to-end suites start it. An admin creates an organization, a product with a key
// pair, two licenses and a license token. Then `go test` runs the README's walk-through
// (examples/online), the abuse cases and a revocation. Last, analytics must count the sync whose
// answer was lost, and retried, once. Then `go test` cuts the platform off from two clients with a
// TCP relay (examples/online/outage_test.go), and watches their heartbeats and grace period. Last, an
// air-gapped machine activates and releases its seat with the SDK's files (offline_test.go).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { apiKeyWithScopes, createLicense, productWithKeyPair } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from '../../apps/gateway-e2e/src/support/stack';
import { licenseWithToken, outageLicenses } from '../support/licenses';

const run = promisify(execFile);
const GO_DIR = __dirname;
const GO_HOME = join(tmpdir(), 'licensing-go-sdk');
const goEnv = {
  GOCACHE: join(GO_HOME, 'cache'),
  GOPATH: join(GO_HOME, 'path'),
  GOFLAGS: '-mod=mod',
  GOPROXY: 'off',
  GOTOOLCHAIN: 'local',
  GOTELEMETRY: 'off',
  CGO_ENABLED: '0',
};

describe('the Go SDK online client against the platform', () => {
  let stack: TestStack;
  let org: TestOrganization;
  const dir = mkdtempSync(join(tmpdir(), 'go-sdk-online-'));

  beforeAll(async () => {
    await run('sh', [join(GO_DIR, 'scripts/ensure-toolchain.sh')], { env: { ...process.env, ...goEnv } });
    stack = await startStack();
    org = await stack.newOrganization();
  }, 600_000);
  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the walk-through in the README exactly as examples/online runs it', () => {
    const example = readFileSync(join(GO_DIR, 'examples/online/main.go'), 'utf8');
    const readme = readFileSync(join(GO_DIR, 'README.md'), 'utf8');
    expect(readme).toContain('```go\n' + example + '```');
  });

  it('activates, heartbeats, validates, checks in and out, syncs once, sees a revocation, rides out an outage, activates air-gapped', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id, max_seats: 3 });
    const other = await createLicense(org.api, { product_id: product.id, max_seats: 3 });
    const token = await org.api.post(`/api/v1/licenses/${license.id}/tokens`, { name: 'go-sdk' });
    expect(token.status).toBe(201);
    const publicKey = await org.api.get(`/api/v1/products/${product.id}/public-key`);
    expect(publicKey.status).toBe(200);
    const responseKeys = await org.api.get('/api/v1/organizations/current/response-keys');
    expect(responseKeys.status).toBe(200);
    const clientKey = (await apiKeyWithScopes(org.api, ['client'])).key.key as string;
    writeFileSync(join(dir, 'public-key.pem'), publicKey.body.public_key as string);
    writeFileSync(join(dir, 'response-keys.json'), JSON.stringify(responseKeys.body));
    const outage = await outageLicenses(org.api, product.id as string);
    const airGapped = await licenseWithToken(org.api, { product_id: product.id, max_seats: 1 });

    let output: string;
    try {
      ({ stdout: output } = await run(
        'go',
        [
          'test',
          '-count=1',
          '-v',
          '-run',
          '^(TestWalkThroughAgainstThePlatform|TestOutageAgainstThePlatform|TestAirGappedActivationAgainstThePlatform)$',
          './examples/online',
        ],
        {
          cwd: GO_DIR,
          maxBuffer: 16 * 1024 * 1024,
          env: {
            ...process.env,
            ...goEnv,
            LICENSING_URL: stack.baseUrl,
            LICENSING_LICENSE_TOKEN: token.body.token as string,
            LICENSING_LICENSE_KEY: license.serial as string,
            LICENSING_LICENSE_ID: license.id as string,
            LICENSING_PUBLIC_KEY: join(dir, 'public-key.pem'),
            LICENSING_RESPONSE_KEYS: join(dir, 'response-keys.json'),
            LICENSING_CLIENT_KEY: clientKey,
            LICENSING_ADMIN_KEY: org.adminKey,
            LICENSING_OTHER_LICENSE_KEY: other.serial as string,
            LICENSING_OUTAGE: JSON.stringify(outage),
            LICENSING_OFFLINE: JSON.stringify(airGapped),
          },
        },
      ));
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`go test failed:\n${stdout}${stderr}`);
    }
    expect(output).toContain('--- PASS: TestWalkThroughAgainstThePlatform');
    expect(output).toContain('--- PASS: TestOutageAgainstThePlatform');
    expect(output).toContain('--- PASS: TestAirGappedActivationAgainstThePlatform');
    expect(output).toContain('validate: ok valid: true');
    expect(output).toContain('valid offline: true');
    expect(output).toContain(`revocation: ${license.serial as string} active`);

    // The sync answer the test lost was retried with the same report_id: analytics counts it once.
    const syncs = async (): Promise<number> =>
      (await org.api.get(`/api/v1/licenses/${license.id}/usage`)).body.syncs as number;
    const deadline = Date.now() + 15_000;
    while ((await syncs()) < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    // A second report, had one been stored, would be counted by now.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await syncs()).toBe(1);
    // License B was not touched: no seat, no report.
    expect((await org.api.get(`/api/v1/activations?license_id=${other.id}`)).body.total).toBe(0);
    expect(((await org.api.get(`/api/v1/licenses/${other.id}/usage`)).body as { syncs: number }).syncs).toBe(
      0,
    );
  }, 300_000);
});
