import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLicensingCli } from '@licensing/app/cli';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { createLicense, productWithKeyPair, uniqueCode } from './support/fixtures';

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

    // A checked-out file: it expires on its own, and verifies offline until then.
    const checkedOut = join(dir, 'checkout.lic');
    const checkout = await cli(
      'licenses',
      'checkout',
      licenseId,
      '--ttl',
      '7200',
      '-o',
      checkedOut,
      '--json',
    );
    expect(checkout).toMatchObject({ code: 0, json: { file: checkedOut, serial: license.json.serial } });
    expect(Date.parse(checkout.json.expires_at) - Date.parse(checkout.json.issued_at)).toBe(7_200_000);
    expect(await cli('verify', checkedOut, '--public-key', join(dir, 'product.pem'), '--json')).toMatchObject(
      { code: 0, json: { valid: true, license: { expires_at: checkout.json.expires_at } } },
    );
    const tooShort = await cli('licenses', 'checkout', licenseId, '--ttl', '60');
    expect(tooShort.code).not.toBe(0);
    expect(tooShort.err).toContain('ttl_seconds');

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

  it('manages entitlements, attaches them to a license, and counts its uses', async () => {
    const keyPair = await cli('key-pairs', 'create', '--json');
    const product = await cli(
      'products',
      'create',
      '--name',
      'Metered',
      '--code',
      `metered-${Date.now().toString(36)}`,
      '--key-pair-id',
      keyPair.json.id,
      '--json',
    );
    const code = `export.pdf-${Date.now().toString(36)}`;
    const entitlement = await cli('entitlements', 'create', '--code', code, '--name', 'Export', '--json');
    expect(entitlement).toMatchObject({ code: 0, json: { code, name: 'Export' } });
    expect((await cli('entitlements', 'list', '--json')).json.entitlements.map((e: any) => e.code)).toContain(
      code,
    );
    expect((await cli('entitlements', 'rename', entitlement.json.id, 'PDF', '--json')).json.name).toBe('PDF');
    expect((await cli('entitlements', 'get', entitlement.json.id, '--json')).json.name).toBe('PDF');

    const license = await cli(
      'licenses',
      'create',
      '--product-id',
      product.json.id,
      '--max-uses',
      '2',
      '--json',
    );
    expect(license.json).toMatchObject({ uses: 0, max_uses: 2, entitlements: [] });
    const id = license.json.id as string;
    expect((await cli('licenses', 'entitle', id, code, '--json')).json.entitlements).toEqual([code]);
    const unknown = await cli('licenses', 'entitle', id, 'no-such-code');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('no-such-code');
    expect((await cli('licenses', 'use', id, '--increment', '2', '--json')).json).toEqual({
      uses: 2,
      max_uses: 2,
    });
    expect((await cli('licenses', 'use', id)).code).toBe(1);
    expect((await cli('licenses', 'reset-usage', id, '--json')).json).toEqual({ uses: 0, max_uses: 2 });
    // In use, the entitlement cannot be deleted; detached, it can.
    expect((await cli('entitlements', 'delete', entitlement.json.id)).code).toBe(1);
    expect((await cli('licenses', 'unentitle', id, code, '--json')).json.entitlements).toEqual([]);
    expect((await cli('entitlements', 'delete', entitlement.json.id)).code).toBe(0);
  });

  it('imports licenses from a CSV once, however often or however far it runs, and exports them all', async () => {
    const keyPair = (await cli('key-pairs', 'create', '--json')).json;
    const code = `import-${Date.now().toString(36)}`;
    const product = (
      await cli(
        'products',
        'create',
        '--name',
        'Imported',
        '--code',
        code,
        '--key-pair-id',
        keyPair.id,
        '--json',
      )
    ).json;
    const rows = [
      'product_id,license_type,customer_id,customer_email,features,max_seats',
      `${product.id},subscription,,a@example.com,pro;sync,1`,
      `${product.id},floating,,b@example.com,pro,5`,
      `${product.id},subscription,,not-an-email,,1`,
      `${product.id},subscription,,a@example.com,pro;sync,1`,
      `${product.id},perpetual,"c, the ""third""",c@example.com,,1`,
    ];
    const full = join(dir, 'licenses.csv');
    const firstTwo = join(dir, 'first-two.csv');
    writeFileSync(full, `${rows.join('\n')}\n`);
    writeFileSync(firstTwo, `${rows.slice(0, 3).join('\n')}\n`);
    const count = async () =>
      (await cli('licenses', 'list', '--product-id', product.id, '--json')).json.total as number;

    // An import interrupted after two rows, then the whole file, then the whole file again.
    expect(await cli('licenses', 'import', firstTwo, '--json')).toMatchObject({
      code: 0,
      json: { rows: 2, ok: 2, failed: [] },
    });
    const run = await cli('licenses', 'import', full, '--json');
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({ rows: 5, ok: 4, failed: [{ line: 4 }] });
    expect(run.json.failed).toHaveLength(1);
    expect(run.json.failed[0].detail).toMatch(/customer_email/);
    expect(run.err).toContain('1 row(s) failed');
    // Lines 2 and 5 are the same but two licenses; each row is created once however often it is sent.
    expect(await count()).toBe(4);
    expect((await cli('licenses', 'import', full, '--json')).json).toMatchObject({ ok: 4 });
    expect(await count()).toBe(4);

    const unknown = join(dir, 'unknown.csv');
    writeFileSync(unknown, 'product,colour\nx,y\n');
    const refused = await cli('licenses', 'import', unknown);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/unknown column\(s\) product, colour/);

    const csv = await cli('licenses', 'export', '--product-id', product.id);
    expect(csv.code).toBe(0);
    const lines = csv.out.trim().split('\n');
    expect(lines[0]).toBe(
      'id,serial,product_id,product_code,license_type,status,customer_id,customer_email,features,max_seats,fingerprint,valid_from,valid_until,created_at',
    );
    expect(lines).toHaveLength(5);
    const out = join(dir, 'export.jsonl');
    const jsonl = await cli(
      'licenses',
      'export',
      '--product-id',
      product.id,
      '--format',
      'jsonl',
      '--output',
      out,
    );
    expect(jsonl.code).toBe(0);
    const exported = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(exported).toHaveLength(4);
    expect(exported.map((l: { customer_email: string }) => l.customer_email).sort()).toEqual([
      'a@example.com',
      'a@example.com',
      'b@example.com',
      'c@example.com',
    ]);
    // Quotes and commas survive the CSV round trip.
    expect(lines.some((line) => line.includes('"c, the ""third"""'))).toBe(true);
  });

  it('imports its own export into another product: what is active, as it was, once', async () => {
    const from = (await productWithKeyPair(org.api)).product;
    const to = (await productWithKeyPair(org.api)).product;
    const make = (body: Record<string, unknown>) => createLicense(org.api, { product_id: from.id, ...body });
    await make({
      customer_email: 'dated@example.com',
      features: ['pro', 'sync'],
      max_seats: 3,
      valid_days: 30,
    });
    await make({ customer_email: 'forever@example.com', license_type: 'perpetual', valid_days: 0 });
    await make({ customer_email: 'bound@example.com', hardware_binding: { fingerprint: 'machine-7' } });
    const revoked = await make({ customer_email: 'revoked@example.com' });
    expect((await org.api.delete(`/api/v1/licenses/${revoked.id}`)).status).toBe(200);
    const suspended = await make({ customer_email: 'suspended@example.com' });
    expect((await org.api.patch(`/api/v1/licenses/${suspended.id}`, { status: 'suspended' })).status).toBe(
      200,
    );

    const file = join(dir, 'round-trip.csv');
    expect((await cli('licenses', 'export', '--product-id', from.id, '-o', file)).code).toBe(0);
    expect(readFileSync(file, 'utf8').split('\n')[0]).toContain(',fingerprint,');

    const imported = await cli('licenses', 'import', file, '--product-id', to.id, '--json');
    expect(imported).toMatchObject({
      code: 0,
      json: { rows: 5, ok: 3, created: 3, replayed: 0, failed: [] },
    });
    expect(imported.json.skipped.map((s: { reason: string }) => s.reason).sort()).toEqual([
      'revoked in the export',
      'suspended in the export',
    ]);
    const copies = (await org.api.get(`/api/v1/licenses?product_id=${to.id}`)).body.licenses as any[];
    const byEmail = (email: string) => copies.find((license) => license.customer_email === email);
    const originals = (await org.api.get(`/api/v1/licenses?product_id=${from.id}`)).body.licenses as any[];
    const original = (email: string) => originals.find((license) => license.customer_email === email);
    expect(copies).toHaveLength(3);
    expect(byEmail('dated@example.com')).toMatchObject({
      features: ['pro', 'sync'],
      max_seats: 3,
      status: 'active',
    });
    // It ends on the original's day or the next: whole days, counted from the start of today.
    const ends = (email: string) =>
      Date.parse(byEmail(email).valid_until) - Date.parse(original(email).valid_until);
    expect(ends('dated@example.com')).toBeGreaterThanOrEqual(0);
    expect(ends('dated@example.com')).toBeLessThanOrEqual(2 * 86_400_000);
    expect(byEmail('forever@example.com')).toMatchObject({ license_type: 'perpetual', valid_until: null });
    expect(byEmail('bound@example.com').hardware_binding).toEqual({ fingerprint: 'machine-7' });

    // Again: nothing is created, and the report says so.
    const again = await cli('licenses', 'import', file, '--product-id', to.id);
    expect(again.code).toBe(0);
    expect(again.out).toContain('3 of 5 rows imported: 0 created, 3 already imported by an earlier run');
    expect(again.out).toContain('skipped, revoked in the export');
    expect((await org.api.get(`/api/v1/licenses?product_id=${to.id}`)).body.total).toBe(3);
  });

  it('changes a license, frees a seat, and manages webhooks and their deliveries', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id, max_seats: 2, valid_days: 30 });
    const serial = license.serial as string;
    const updated = await cli(
      'licenses',
      'update',
      serial,
      '--customer-email',
      'new@example.com',
      '--max-seats',
      '4',
      '--features',
      'pro,sync',
      '--valid-until',
      'none',
      '--fingerprint',
      'machine-9',
      '--json',
    );
    expect(updated.json).toMatchObject({
      id: license.id,
      customer_email: 'new@example.com',
      max_seats: 4,
      features: ['pro', 'sync'],
      valid_until: null,
      hardware_binding: { fingerprint: 'machine-9' },
    });
    expect(
      (await cli('licenses', 'update', serial, '--fingerprint', 'none', '--json')).json.hardware_binding,
    ).toBe(null);

    const seat = await org.api.post('/api/v1/activations', {
      license_id: license.id,
      fingerprint: 'machine-9',
    });
    expect(seat.status).toBe(201);
    const listed = await cli('activations', 'list', '--license', serial, '--json');
    expect(listed.json).toMatchObject({
      total: 1,
      activations: [{ id: seat.body.id, fingerprint: 'machine-9' }],
    });
    expect((await cli('activations', 'delete', seat.body.id)).code).toBe(0);
    expect((await cli('activations', 'list', '--license', license.id, '--json')).json.total).toBe(0);

    const created = await cli(
      'webhooks',
      'create',
      '--endpoint',
      'https://hooks.example.test/cli',
      '--events',
      'license.*,product.created',
      '--json',
    );
    expect(created.json).toMatchObject({
      events: ['license.*', 'product.created'],
      secret: expect.stringMatching(/^whsec_/),
    });
    const id = created.json.id as string;
    expect(
      (await cli('webhooks', 'list', '--json')).json.webhooks.map((w: { id: string }) => w.id),
    ).toContain(id);
    expect((await cli('webhooks', 'get', id, '--json')).json).toMatchObject({ id, enabled: true });
    expect((await cli('webhooks', 'update', id, '--disable', '--events', '*', '--json')).json).toMatchObject({
      enabled: false,
      events: ['*'],
    });
    expect((await cli('webhooks', 'update', id, '--enable', '--json')).json).toMatchObject({ enabled: true });
    const rotated = await cli('webhooks', 'rotate-secret', id, '--json');
    expect(rotated.json.secret).not.toBe(created.json.secret);
    const tested = await cli('webhooks', 'test', id, '--json');
    expect(tested.json.delivery_id).toEqual(expect.any(String));
    const log = await cli('webhooks', 'deliveries', id, '--json');
    expect(log.json.deliveries.map((d: { id: string }) => d.id)).toContain(tested.json.delivery_id);
    expect((await cli('webhooks', 'redeliver', tested.json.delivery_id, '--json')).json).toMatchObject({
      id: tested.json.delivery_id,
      status: 'pending',
    });
    expect((await cli('webhooks', 'delete', id)).code).toBe(0);
    expect((await cli('webhooks', 'get', id)).code).toBe(1);
  });

  it('manages policies and issues licenses that follow one', async () => {
    const { product } = await productWithKeyPair(org.api);
    const code = uniqueCode('ent');
    expect((await org.api.post('/api/v1/entitlements', { code, name: code })).status).toBe(201);
    const created = await cli(
      'policies',
      'create',
      '--product-id',
      product.id,
      '--name',
      'Team',
      '--type',
      'floating',
      '--duration-days',
      'none',
      '--max-machines',
      '3',
      '--max-processes',
      '2',
      '--overage',
      '1.5x',
      '--max-uses',
      '100',
      '--uses-reset',
      'month',
      '--json',
    );
    expect(created.err).toBe('');
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({
      name: 'Team',
      duration_days: null,
      max_machines: 3,
      overage: '1.5x',
      max_uses: 100,
      uses_reset: 'month',
      entitlements: [],
    });
    const id = created.json.id as string;
    const updated = await cli(
      'policies',
      'update',
      id,
      '--max-processes',
      'none',
      '--max-machines',
      '4',
      '--uses-reset',
      'none',
      '--entitlements',
      code,
      '--json',
    );
    expect(updated.json).toMatchObject({
      max_processes: null,
      max_machines: 4,
      uses_reset: null,
      entitlements: [code],
    });
    expect((await cli('policies', 'list', '--product-id', product.id, '--json')).json.total).toBe(1);
    expect((await cli('policies', 'get', id)).out).toMatch(/max_machines\s+4/);
    const license = await cli('licenses', 'create', '--policy-id', id, '--json');
    expect(license.json).toMatchObject({
      policy_id: id,
      product_id: product.id,
      max_seats: 4,
      valid_until: null,
      max_uses: 100,
      entitlements: [code],
    });
    const refused = await cli('policies', 'delete', id);
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

  it('names a license by its id or its serial, and says so when no license has it', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id, max_seats: 2 });
    const serial = license.serial as string;
    expect((await cli('licenses', 'get', serial, '--json')).json).toMatchObject({ id: license.id, serial });
    expect((await cli('licenses', 'get', serial.toLowerCase(), '--json')).json).toMatchObject({
      id: license.id,
    });
    expect((await cli('licenses', 'suspend', serial, '--json')).json).toMatchObject({ status: 'suspended' });
    expect((await cli('licenses', 'reinstate', serial, '--json')).json).toMatchObject({ status: 'active' });
    const file = join(dir, 'by-serial.lic');
    expect((await cli('licenses', 'download', serial, '-o', file)).code).toBe(0);
    expect(readFileSync(file, 'utf8').split('.')).toHaveLength(3);
    expect((await cli('licenses', 'revoke', serial)).code).toBe(0);
    expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.status).toBe('revoked');

    const missing = await cli('licenses', 'get', 'LIC-NO-SUCH-SERIAL');
    expect(missing).toMatchObject({
      code: 1,
      err: 'error: no license has the id or serial LIC-NO-SUCH-SERIAL\n',
    });
    // Another organization's serial is not found either.
    const other = await stack.newOrganization();
    const elsewhere = await createLicense(other.api, {
      product_id: (await productWithKeyPair(other.api)).product.id,
    });
    expect((await cli('licenses', 'get', elsewhere.serial as string)).code).toBe(1);
  });

  it("issues a relay file from the relay's request, lists it, and imports the relay's report once", async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, {
      product_id: product.id,
      license_type: 'floating',
      max_seats: 3,
    });
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const request = join(dir, 'relay-request.json');
    writeFileSync(
      request,
      JSON.stringify({ v: 1, kind: 'relay_request', site: 'plant-7', public_key: publicPem }),
    );
    const out = join(dir, 'plant-7.relay.lic');
    const created = await cli(
      'relay-files',
      'create',
      license.serial,
      '--request',
      request,
      '--ttl',
      '7200',
      '-o',
      out,
      '--json',
    );
    expect(created).toMatchObject({
      code: 0,
      json: { file: out, license_id: license.id, site: 'plant-7', public_key: publicPem },
    });
    expect(created.json).not.toHaveProperty('relay_file');
    expect(Date.parse(created.json.expires_at) - Date.parse(created.json.issued_at)).toBe(7_200_000);
    const productKey = join(dir, 'relay-product.pem');
    writeFileSync(
      productKey,
      (await org.api.get(`/api/v1/products/${product.id}/public-key`)).body.public_key,
    );
    expect(
      await cli('verify', out, '--public-key', productKey, '--product-id', product.id, '--json'),
    ).toMatchObject({
      code: 0,
      json: { valid: true, license: { serial: license.serial } },
    });
    const listed = await cli('relay-files', 'list', '--license-id', license.id, '--json');
    expect(listed.json).toMatchObject({ total: 1, relay_files: [{ id: created.json.id }] });
    expect((await cli('relay-files', 'list', '--license-id', license.id)).out).toContain('plant-7');
    expect((await cli('relay-files', 'get', created.json.id, '--json')).json).toMatchObject({
      site: 'plant-7',
    });
    const keyFile = join(dir, 'relay.pem');
    writeFileSync(keyFile, publicPem);
    const bySite = await cli(
      'relay-files',
      'create',
      license.id,
      '--site',
      'plant-8',
      '--public-key',
      keyFile,
      '-o',
      join(dir, 'b.lic'),
      '--json',
    );
    expect(bySite).toMatchObject({ code: 0, json: { site: 'plant-8' } });
    expect((await cli('relay-files', 'create', license.id, '--site', 'plant-9')).code).toBe(2);
    const notFloating = await createLicense(org.api, { product_id: product.id });
    const refused = await cli(
      'relay-files',
      'create',
      notFloating.id,
      '--request',
      request,
      '-o',
      join(dir, 'c.lic'),
    );
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^error: .*floating.*\n$/);

    const header = Buffer.from(
      JSON.stringify({ alg: 'EdDSA', typ: 'relay-report+jws', kid: created.json.id }),
    ).toString('base64url');
    const payload = Buffer.from(
      JSON.stringify({
        v: 1,
        kind: 'relay_report',
        report_id: randomUUID(),
        relay_file_id: created.json.id,
        site: 'plant-7',
        serial: license.serial,
        product_id: product.id,
        created_at: new Date().toISOString(),
        leases: [
          {
            id: randomUUID(),
            fingerprint: 'machine-a',
            leased_at: new Date().toISOString(),
            ended_at: null,
            seats_in_use: 1,
          },
        ],
      }),
    ).toString('base64url');
    const report = join(dir, 'usage.jws');
    const signature = sign(null, Buffer.from(`${header}.${payload}`), privateKey).toString('base64url');
    writeFileSync(report, `${header}.${payload}.${signature}\n`);
    const imported = await cli('relay-reports', 'import', report, '--json');
    expect(imported).toMatchObject({
      code: 0,
      json: { relay_file_id: created.json.id, leases: 1, counted: 1 },
    });
    expect((await cli('relay-reports', 'import', report)).out).toContain(created.json.id);
    writeFileSync(report, `${header}.${payload}.${signature.slice(0, -4)}AAAA`);
    const tampered = await cli('relay-reports', 'import', report);
    expect(tampered.code).toBe(1);
    expect(tampered.err).toMatch(/^error: .*relay report is invalid.*\n$/);
  });

  it('reads its help as a person wrote it, renames a product, and names an unknown command', async () => {
    expect((await cli('licenses', 'list', '--help')).out).toContain('List licenses, newest first');
    expect((await cli('api-keys', 'list', '--help')).out).toContain('List API keys, newest first');
    expect((await cli('products', 'get', '--help')).out).toContain('Show a product');
    expect((await cli('licenses', 'get', '--help')).out).toContain('Show a license (by id or serial)');
    const { product } = await productWithKeyPair(org.api);
    const renamed = await cli('products', 'update', product.id, '--name', 'Photo Editor Pro', '--json');
    expect(renamed.json).toMatchObject({ id: product.id, name: 'Photo Editor Pro', code: product.code });
    const unknown = await cli('nonsense');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("error: unknown command 'nonsense'");
  });
});
