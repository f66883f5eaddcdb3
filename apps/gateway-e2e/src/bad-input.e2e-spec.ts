import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { ApiClient, ApiResponse, waitFor } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, productWithKeyPair, uniqueCode } from './support/fixtures';

/** A 400 problem+json whose field errors name `field`. */
function expectFieldError(response: ApiResponse, field: string): void {
  expect(response.status).toBe(400);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body.code).toBe('validation_failed');
  expect(response.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
}

/** `{"a":{"a":…{"a":1}…}}`, `depth` objects deep. */
const nested = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('input that no service could store is a 400 naming the field, never a 5xx', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let client: ApiClient;
  let product: { id: string };
  let license: { id: string; serial: string };
  let serial: string;

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
    ({ api: client } = await apiKeyWithScopes(org.api, ['client']));
    ({ product } = await productWithKeyPair(org.api));
    license = await createLicense(org.api, { product_id: product.id });
    serial = license.serial;
  });
  afterAll(() => stack.close());

  const productCount = async (): Promise<number> => (await org.api.get('/api/v1/products')).body.total;

  it.each([
    ['a NUL character', 'Photo\u0000Editor'],
    ['a lone low surrogate', 'Photo \udfff Editor'],
    ['a lone high surrogate', 'Photo \ud800'],
  ])('refuses %s in a product name, and creates nothing', async (_, name) => {
    const before = await productCount();
    const response = await org.api.post('/api/v1/products', { name, code: uniqueCode() });
    expectFieldError(response, 'name');
    expect(await productCount()).toBe(before);
  });

  it('answers a request line and headers over 16 KiB, or bytes that are not HTTP, in problem+json', async () => {
    const tooLong = await fetch(`${stack.baseUrl}/api/v1/webhooks/${'x'.repeat(20_000)}`, {
      headers: { authorization: `Bearer ${org.adminKey}` },
    });
    expect(tooLong.status).toBe(431);
    expect(tooLong.headers.get('content-type')).toBe('application/problem+json');
    expect(await tooLong.json()).toEqual({
      type: 'about:blank',
      title: 'Request Header Fields Too Large',
      status: 431,
      code: 'validation_failed',
      detail: 'The request line and headers are larger than 16 KiB',
    });

    const { port } = new URL(stack.baseUrl);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.end('NOT HTTP AT ALL\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('Content-Type: application/problem+json');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
  });

  it('refuses a NUL character in a nested field and in an array element, naming the path', async () => {
    const license = await org.api.post('/api/v1/licenses', {
      product_id: product.id,
      features: ['pro', 'ex\u0000port'],
    });
    expectFieldError(license, 'features.1');
    const patched = await org.api.patch(`/api/v1/licenses/${randomUUID()}`, {
      hardware_binding: { fingerprint: 'm\u0000' },
    });
    expectFieldError(patched, 'hardware_binding.fingerprint');
  });

  it('refuses a lone surrogate in customer_email (which once crashed the e-mail validator)', async () => {
    const response = await org.api.post('/api/v1/licenses', {
      product_id: product.id,
      customer_email: '\udfff@example.com',
    });
    expectFieldError(response, 'customer_email');
  });

  it('refuses a lone surrogate or a NUL in an object key', async () => {
    expectFieldError(await org.api.post('/api/v1/key-pairs', '{"na\\udfffme": "x"}'), 'body');
    expectFieldError(await org.api.post('/api/v1/key-pairs', '{"na\\u0000me": "x"}'), 'body');
  });

  it('refuses a body nested deeper than 32 levels, however deep, on every kind of route', async () => {
    for (const depth of [33, 64, 5_000, 100_000]) {
      expectFieldError(await org.api.post('/api/v1/products', nested(depth)), 'a' + '.a'.repeat(31));
      expect((await client.post('/api/v1/licenses/sync', nested(depth))).status).toBe(400);
    }
  });

  it('refuses bytes that are not UTF-8 rather than replacing them', async () => {
    const body = Buffer.concat([
      Buffer.from('{"name": "Photo '),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    const response = await org.api.post('/api/v1/key-pairs', body);
    expectFieldError(response, 'body');
  });

  it('refuses a NUL character in a query string', async () => {
    expectFieldError(await org.api.get('/api/v1/licenses?customer_email=a%00b'), 'customer_email');
  });

  it('answers a malformed percent-encoding in the path as problem+json, after authentication', async () => {
    const response = await org.api.get('/api/v1/products/%ZZ', { 'x-request-id': 'bad-path-1' });
    expectFieldError(response, 'path');
    expect(response.headers.get('x-request-id')).toBe('bad-path-1');

    const anonymous = await stack.anonymous.get('/api/v1/products/%ZZ');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('unauthorized');
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('stores control characters other than NUL, and returns them exactly', async () => {
    const description = 'tab\there, bell\u0007, escape\u001b[0m, emoji \ud83d\ude00, rtl \u202e';
    const created = await org.api.post('/api/v1/products', { name: 'Ctl', code: uniqueCode(), description });
    expect(created.status).toBe(201);
    expect((await org.api.get(`/api/v1/products/${created.body.id}`)).body.description).toBe(description);
  });

  it('refuses __proto__ and constructor.prototype keys (prototype poisoning)', async () => {
    const proto = await org.api.post('/api/v1/key-pairs', '{"name": "x", "__proto__": {"admin": true}}');
    expect(proto.status).toBe(400);
    const ctor = await org.api.post('/api/v1/key-pairs', '{"constructor": {"prototype": {"admin": true}}}');
    expect(ctor.status).toBe(400);
  });

  it('refuses integers beyond what the field allows, 2^53 and beyond included', async () => {
    for (const seats of ['9007199254740993', '1e308', '-0.5']) {
      const response = await client.post(
        '/api/v1/licenses/sync',
        `{"license_serial": "${serial}", "seats_in_use": ${seats}}`,
      );
      expectFieldError(response, 'seats_in_use');
    }
  });

  describe('sync refuses what analytics could not store, so an acknowledged report is never dropped', () => {
    it.each([
      ['hardware_fingerprint', { hardware_fingerprint: 'm\u0000' }],
      ['hardware_fingerprint', { hardware_fingerprint: 'm\udfff' }],
      ['app_version', { app_version: '2.4\u0000' }],
      ['features_used.0', { features_used: ['\ud800'] }],
    ])('a bad %s is a 400', async (field, report) => {
      expectFieldError(
        await client.post('/api/v1/licenses/sync', { license_serial: serial, ...report }),
        field,
      );
    });

    it('counts the good report sent after the refused ones, and only that one', async () => {
      const ok = await client.post('/api/v1/licenses/sync', {
        license_serial: serial,
        hardware_fingerprint: 'm1',
      });
      expect(ok.status).toBe(200);
      const usage = await waitFor(
        async () => {
          const response = await org.api.get(`/api/v1/licenses/${license.id}/usage`);
          return response.body.syncs >= 1 && response.body;
        },
        { what: 'the good report counted' },
      );
      expect(usage.syncs).toBe(1);
      expect(usage.fingerprints).toEqual([expect.objectContaining({ fingerprint: 'm1' })]);
    });
  });
});
