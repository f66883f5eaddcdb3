import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLicensingCli } from '@licensing/app/cli';
import { TestOrganization, TestStack, startStack } from './support/stack';

/** The `licensing` command line against the running platform, in-process, as an operator runs it. */
describe('the licensing CLI', () => {
  let stack: TestStack;
  let org: TestOrganization;
  const dir = mkdtempSync(join(tmpdir(), 'licensing-cli-'));

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
  }, 60_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await stack.close();
  });

  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string; json: any }> {
    let out = '';
    let err = '';
    const code = await runLicensingCli(argv, {
      stdout: (t) => (out += t),
      stderr: (t) => (err += t),
      env: { LICENSING_URL: stack.baseUrl, LICENSING_API_KEY: org.adminKey },
    });
    let json: unknown;
    try {
      json = JSON.parse(out);
    } catch {
      json = undefined;
    }
    return { code, out, err, json };
  }

  it('manages key pairs, products, licenses and API keys, with --json output that parses', async () => {
    const keyPair = await cli(
      'key-pairs',
      'create',
      '--name',
      'signing',
      '--algorithm',
      'ecdsa-p256',
      '--json',
    );
    expect(keyPair).toMatchObject({ code: 0, json: { name: 'signing', algorithm: 'ecdsa-p256' } });
    expect((await cli('key-pairs', 'list', '--json')).json.key_pairs.map((k: any) => k.id)).toContain(
      keyPair.json.id,
    );

    const code = `cli-${Date.now().toString(36)}`;
    const product = await cli(
      'products',
      'create',
      '--name',
      'CLI Tool',
      '--code',
      code,
      '--key-pair-id',
      keyPair.json.id,
      '--default-features',
      'basic,export',
      '--json',
    );
    expect(product).toMatchObject({ code: 0, json: { code, default_features: ['basic', 'export'] } });
    const id = product.json.id as string;
    expect((await cli('products', 'get', id, '--json')).json).toMatchObject({ id, code });
    expect(
      (await cli('products', 'update', id, '--description', 'from the CLI', '--json')).json,
    ).toMatchObject({
      description: 'from the CLI',
    });
    expect((await cli('products', 'list', '--json')).json.total).toBeGreaterThanOrEqual(1);

    const license = await cli(
      'licenses',
      'create',
      '--product-id',
      id,
      '--customer-email',
      'ada@example.com',
      '--json',
    );
    expect(license).toMatchObject({
      code: 0,
      json: { product_id: id, features: ['basic', 'export'], status: 'active' },
    });
    const licenseId = license.json.id as string;
    expect((await cli('licenses', 'list', '--product-id', id, '--json')).json).toMatchObject({ total: 1 });
    expect((await cli('licenses', 'suspend', licenseId, '--json')).json.status).toBe('suspended');
    expect((await cli('licenses', 'reinstate', licenseId, '--json')).json.status).toBe('active');

    const file = join(dir, 'license.lic');
    expect(await cli('licenses', 'download', licenseId, '-o', file)).toMatchObject({ code: 0 });
    writeFileSync(
      join(dir, 'product.pem'),
      (await org.api.get(`/api/v1/products/${id}/public-key`)).body.public_key,
    );

    // Offline verification, with the PEM file and with the public-key URL.
    const verified = await cli(
      'verify',
      file,
      '--public-key',
      join(dir, 'product.pem'),
      '--product-id',
      id,
      '--json',
    );
    expect(verified).toMatchObject({
      code: 0,
      json: { valid: true, errors: [], license: { license_id: licenseId } },
    });
    expect(
      await cli('verify', file, '--public-key', `${stack.baseUrl}/v1/products/${id}/public-key`),
    ).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^valid: LIC-/),
    });
    const wrongProduct = await cli(
      'verify',
      file,
      '--public-key',
      join(dir, 'product.pem'),
      '--product-id',
      keyPair.json.id,
    );
    expect(wrongProduct).toMatchObject({ code: 1, out: expect.stringContaining('product_mismatch') });
    expect((await cli('inspect', file, '--json')).json).toMatchObject({
      serial: license.json.serial,
      product_id: id,
    });
    expect((await cli('inspect', file)).out).toContain(license.json.serial);

    expect((await cli('licenses', 'revoke', licenseId, '--json')).json.message).toBeDefined();
    expect((await cli('licenses', 'get', licenseId, '--json')).json.status).toBe('revoked');

    const key = await cli('api-keys', 'create', '--name', 'ci', '--scopes', 'read', '--json');
    expect(key.json).toMatchObject({ name: 'ci', scopes: ['read'], key: expect.stringMatching(/^lk_/) });
    expect((await cli('api-keys', 'list', '--json')).json.api_keys.map((k: any) => k.id)).toContain(
      key.json.id,
    );
    expect((await cli('api-keys', 'revoke', key.json.id)).code).toBe(0);

    // A product with licenses cannot be deleted; the API's detail is the one-line error.
    const refused = await cli('products', 'delete', id);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^error: .+\n$/);
  });

  it('prints tables by default, help on every command, and one-line errors with non-zero exit codes', async () => {
    expect((await cli('key-pairs', 'list')).out).toMatch(/^ID\s+NAME\s+ALGORITHM\s+CREATED_AT\n/);
    for (const command of [
      [],
      ['verify'],
      ['licenses'],
      ['licenses', 'create'],
      ['products', 'update'],
      ['api-keys', 'revoke'],
    ]) {
      const help = await cli(...command, '--help');
      expect({ command, code: help.code, usage: /Usage: licensing/.test(help.out) }).toEqual({
        command,
        code: 0,
        usage: true,
      });
    }
    const unauthorized = await runLicensingCli(
      ['products', 'list', '--api-key', 'lk_wrong', '--url', stack.baseUrl],
      {
        stdout: () => undefined,
        stderr: (t) => expect(t).toMatch(/^error: .+\n$/),
        env: {},
      },
    );
    expect(unauthorized).toBe(1);
    expect((await cli('licenses', 'get', 'not-a-uuid')).code).toBe(1);
    expect((await cli('verify', join(dir, 'missing.lic'), '--public-key', 'x.pem')).err).toMatch(
      /^error: cannot read/,
    );
    expect((await cli('nonsense')).code).not.toBe(0);
    expect(readFileSync(join(dir, 'license.lic'), 'utf8').split('.')).toHaveLength(3);
  });
});
