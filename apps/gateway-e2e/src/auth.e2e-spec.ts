import { randomBytes, randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { ApiResponse } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { servedPaths } from './support/routes';
import { apiKeyWithScopes, createLicense, productWithKeyPair, uniqueCode } from './support/fixtures';

const KEY = /^lk_[A-Za-z0-9_-]{43}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ONE_MIB = 1024 * 1024;

const unknownKey = (): string => `lk_${randomBytes(32).toString('base64url')}`;

/** A GET with the path sent exactly as written (fetch would normalise `..` segments away). */
function rawGet(baseUrl: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: hostname, port, path, method: 'GET' }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** A JSON body of at least `bytes` bytes. */
const bodyOfSize = (bytes: number): string => JSON.stringify({ name: 'x'.repeat(bytes), code: 'big' });

/**
 * A client that POSTs a 2 MiB body 50 times, 10 at a time, each on a new connection, writing it in
 * 64 KiB pieces as fast as the socket takes them (as curl does), and reading the answer once the
 * body is sent. Prints how many times each outcome (a status, or an error such as EPIPE) happened.
 */
const OVERSIZED_CLIENT = `
const net = require('node:net');
const [target, key] = process.argv.slice(1);
const url = new URL(target);
const body = Buffer.alloc(2 * 1024 * 1024, 'x');
const head = 'POST ' + url.pathname + ' HTTP/1.1\\r\\nHost: ' + url.host + '\\r\\nAuthorization: Bearer ' + key +
  '\\r\\nContent-Type: application/json\\r\\nContent-Length: ' + body.length + '\\r\\n\\r\\n';
const once = () => new Promise((resolve) => {
  const socket = net.connect(Number(url.port), url.hostname);
  let answer = '';
  let failure;
  socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
  socket.on('error', (error) => (failure ??= error.code || String(error)));
  socket.on('close', () => resolve(failure ?? (answer.match(/^HTTP\\/1\\.1 (\\d+)/) || [])[1] ?? 'no answer'));
  socket.on('connect', async () => {
    socket.write(head);
    for (let offset = 0; offset < body.length && !failure; offset += 65536) {
      if (!socket.write(body.subarray(offset, offset + 65536))) await new Promise((r) => socket.once('drain', r));
      await new Promise((r) => setImmediate(r));
    }
    socket.end();
  });
});
(async () => {
  const counts = {};
  for (let round = 0; round < 5; round++)
    for (const outcome of await Promise.all(Array.from({ length: 10 }, once))) counts[outcome] = (counts[outcome] || 0) + 1;
  process.stdout.write(JSON.stringify(counts));
})();
`;

function expectProblem(response: ApiResponse, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ type: 'about:blank', status, code });
  expect(typeof response.body.title).toBe('string');
  expect(typeof response.body.detail).toBe('string');
}

function expectUnauthorized(response: ApiResponse): void {
  expectProblem(response, 401, 'unauthorized');
  expect(response.headers.get('www-authenticate')).toBe('Bearer');
  expect(response.body).not.toHaveProperty('errors');
}

describe('authentication, API keys, scopes and the HTTP edge', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    stack = await startStack();
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
  });
  afterAll(() => stack.close());

  describe('authentication', () => {
    it.each([
      ['no Authorization header', undefined],
      ['a Basic scheme', 'Basic dXNlcjpwYXNzd29yZA=='],
      ['a Token scheme carrying a real-looking key', `Token ${unknownKey()}`],
      ['Bearer with nothing after it', 'Bearer'],
      ['Bearer with a malformed key', 'Bearer not-a-key'],
      ['Bearer with a key that is too short', 'Bearer lk_abc'],
      ['Bearer with a key of the wrong prefix', `Bearer sk_${randomBytes(32).toString('base64url')}`],
      ['Bearer with a key holding two tokens', `Bearer ${unknownKey()} extra`],
      ['Bearer with a well-formed but unknown key', `Bearer ${unknownKey()}`],
    ])('answers 401 unauthorized with WWW-Authenticate: Bearer for %s', async (_what, authorization) => {
      const headers = authorization === undefined ? undefined : { authorization };
      expectUnauthorized(await stack.anonymous.get('/api/v1/products', headers));
      expectUnauthorized(await stack.anonymous.get('/v1/licenses', headers));
      expectUnauthorized(
        await stack.anonymous.post(
          '/api/v1/licenses/verify',
          { license_blob: 'x', product_id: randomUUID() },
          headers,
        ),
      );
    });

    it("answers 401 for another scheme even when it carries the organization's real key", async () => {
      expectUnauthorized(
        await stack.anonymous.get('/api/v1/products', { authorization: `Token ${org.adminKey}` }),
      );
      expectUnauthorized(await stack.anonymous.get('/api/v1/products', { authorization: org.adminKey }));
    });

    it('accepts the Bearer scheme case-insensitively', async () => {
      const response = await stack.anonymous.get('/api/v1/products', {
        authorization: `bearer ${org.adminKey}`,
      });
      expect(response.status).toBe(200);
    });

    it('answers 401 before looking at a malformed JSON body', async () => {
      const response = await stack.anonymous.post('/api/v1/products', '{"name": "broken', {
        authorization: `Bearer ${unknownKey()}`,
      });
      expectUnauthorized(response);
      expectUnauthorized(await stack.anonymous.post('/api/v1/products', '{"name": "broken'));
    });

    it('answers 401 before looking at an oversized body', async () => {
      const response = await stack.anonymous.post('/api/v1/products', bodyOfSize(2 * ONE_MIB), {
        authorization: `Bearer ${unknownKey()}`,
      });
      expectUnauthorized(response);
    });

    it('answers 401 before looking for the route', async () => {
      expectUnauthorized(await stack.anonymous.get('/api/v1/no-such-thing'));
      expectUnauthorized(await stack.anonymous.get('/nowhere', { authorization: `Bearer ${unknownKey()}` }));
      expectUnauthorized(await stack.anonymous.request('PATCH', '/api/v1/products'));
    });

    it('serves the probes (and their older names) without an API key, and with one', async () => {
      const ready = { status: 'ok', checks: { nats: 'up', database: 'up', redis: 'up' } };
      for (const [path, body] of [
        ['/health/live', { status: 'ok' }],
        ['/healthz', { status: 'ok' }],
        ['/health/ready', ready],
        ['/readyz', ready],
      ] as const) {
        const anonymous = await stack.anonymous.get(path);
        expect({ path, status: anonymous.status, body: anonymous.body }).toEqual({ path, status: 200, body });
        const withKey = await org.api.get(path);
        expect({ path, status: withKey.status }).toEqual({ path, status: 200 });
      }
    });

    it('keeps everything outside the public paths behind the key, however the path is spelled', async () => {
      for (const path of [
        '/healthz-admin',
        '/docsx',
        '/consolex',
        '/api/v1/products?x=/docs/',
        '/api/v1/healthz',
        '//api/v1/products',
      ]) {
        expectUnauthorized(await stack.anonymous.get(path));
      }
      // Dot segments after a public prefix never reach an API route without a key.
      await createLicense(org.api, {
        product_id: (await productWithKeyPair(org.api)).product.id,
        customer_email: 'leak@example.com',
      });
      for (const path of [
        '/docs/../api/v1/licenses',
        '/docs/%2e%2e/api/v1/licenses',
        '/healthz/../api/v1/licenses',
        '/health/live/../../api/v1/licenses',
        '/metrics/../api/v1/licenses',
        '/readyz/..%2fapi%2fv1%2flicenses',
        '/openapi.json/../api/v1/api-keys',
        '/docs/../../api/v1/products',
        '/console/../api/v1/licenses',
        '/console/%2e%2e/api/v1/licenses',
      ]) {
        const response = await rawGet(stack.baseUrl, path);
        expect({ path, ok: response.status < 300 }).toEqual({ path, ok: false });
        expect(response.body).not.toContain('leak@example.com');
        expect(response.body).not.toContain('"licenses"');
        expect(response.body).not.toContain('"products"');
        expect(response.body).not.toContain('"api_keys"');
      }
    });

    it('answers 401 before validating path parameters and query strings', async () => {
      expectUnauthorized(await stack.anonymous.get('/api/v1/licenses/not-a-uuid'));
      expectUnauthorized(await stack.anonymous.get('/api/v1/licenses?per_page=1000'));
    });
  });

  describe('API keys', () => {
    it('creates a key: 201 {id, name, scopes, key, prefix, created_at} with key lk_ + 43 chars and prefix its first 10', async () => {
      const response = await org.api.post('/api/v1/api-keys', { name: 'CI deploys', scopes: ['read'] });
      expect(response.status).toBe(201);
      expect(Object.keys(response.body).sort()).toEqual([
        'created_at',
        'id',
        'key',
        'name',
        'prefix',
        'scopes',
      ]);
      const created = response.body;
      expect(created).toMatchObject({ name: 'CI deploys', scopes: ['read'] });
      expect(created.id).toMatch(UUID);
      expect(created.key).toMatch(KEY);
      expect(created.prefix).toBe(created.key.slice(0, 10));
      expect(created.created_at).toMatch(ISO_MS);

      const listed = await org.api.get('/api/v1/api-keys');
      expect(listed.status).toBe(200);
      const item = listed.body.api_keys.find((k: { id: string }) => k.id === created.id);
      expect(item).toEqual({
        id: created.id,
        name: 'CI deploys',
        scopes: ['read'],
        prefix: created.prefix,
        created_at: created.created_at,
      });
      expect(listed.body.api_keys.every((k: object) => !('key' in k) && !('key_hash' in k))).toBe(true);
      expect(listed.body.total).toBe(listed.body.api_keys.length);

      // The key works at once, with its own scopes.
      const asNewKey = await org.api.withKey(created.key).get('/api/v1/products');
      expect(asNewKey.status).toBe(200);
    });

    it('describes the calling key: its scopes, prefix and organization, for every scope, never the key', async () => {
      for (const scopes of [['admin'], ['read'], ['client'], ['read', 'client']] as const) {
        const { key, api } = await apiKeyWithScopes(org.api, [...scopes], `whoami ${scopes.join('+')}`);
        const response = await api.get('/api/v1/api-keys/current');
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          id: key.id,
          name: `whoami ${scopes.join('+')}`,
          scopes: [...scopes],
          prefix: key.prefix,
          created_at: key.created_at,
          org_id: org.id,
          org_name: expect.any(String),
        });
      }
      expect((await org.api.get('/api/v1/api-keys/current')).body.org_name).toMatch(/^test-/);
      expectUnauthorized(await stack.anonymous.get('/api/v1/api-keys/current'));
    });

    it('issues a different key every time, even with the same name', async () => {
      const [a, b] = await Promise.all([
        org.api.post('/api/v1/api-keys', { name: 'twin', scopes: ['client'] }),
        org.api.post('/api/v1/api-keys', { name: 'twin', scopes: ['client'] }),
      ]);
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(a.body.key).not.toBe(b.body.key);
      expect(a.body.id).not.toBe(b.body.id);
    });

    it('accepts several scopes at once', async () => {
      const response = await org.api.post('/api/v1/api-keys', { name: 'both', scopes: ['read', 'client'] });
      expect(response.status).toBe(201);
      expect([...response.body.scopes].sort()).toEqual(['client', 'read']);
    });

    it('revokes a key: DELETE answers 200, the key is refused with 401 at once and leaves the list', async () => {
      const { key, api } = await apiKeyWithScopes(org.api, ['admin'], 'short-lived');
      expect((await api.get('/api/v1/products')).status).toBe(200); // now cached by the gateway

      const revoked = await org.api.delete(`/api/v1/api-keys/${key.id}`);
      expect(revoked.status).toBe(200);
      expect(typeof revoked.body.message).toBe('string');
      expect(revoked.body.message).toMatch(/revoked/i);

      expectUnauthorized(await api.get('/api/v1/products'));
      expectUnauthorized(await api.get('/api/v1/api-keys'));
      const listed = await org.api.get('/api/v1/api-keys?per_page=100');
      expect(listed.body.api_keys.map((k: { id: string }) => k.id)).not.toContain(key.id);

      expectProblem(await org.api.delete(`/api/v1/api-keys/${key.id}`), 404, 'not_found');
    });

    it('lets a key revoke itself, after which it is refused', async () => {
      const { key, api } = await apiKeyWithScopes(org.api, ['admin'], 'self-destruct');
      expect((await api.delete(`/v1/api-keys/${key.id}`)).status).toBe(200);
      expectUnauthorized(await api.get('/api/v1/api-keys'));
    });

    it('answers 404 for revoking an unknown key, 400 for a malformed id', async () => {
      const id = randomUUID();
      const unknown = await org.api.delete(`/api/v1/api-keys/${id}`);
      expectProblem(unknown, 404, 'not_found');
      expect(unknown.body.detail).toContain(id);
      expectProblem(await org.api.delete('/api/v1/api-keys/not-a-uuid'), 400, 'validation_failed');
    });

    it("answers 404 for revoking another organization's key, which keeps working", async () => {
      const { key, api } = await apiKeyWithScopes(other.api, ['read']);
      expectProblem(await org.api.delete(`/api/v1/api-keys/${key.id}`), 404, 'not_found');
      expect((await api.get('/api/v1/products')).status).toBe(200);
      const mine = await org.api.get('/api/v1/api-keys?per_page=100');
      expect(mine.body.api_keys.map((k: { id: string }) => k.id)).not.toContain(key.id);
    });

    it('paginates the API key list newest first with a total, and rejects per_page 101', async () => {
      const tenant = await stack.newOrganization();
      const created = [];
      for (let i = 0; i < 3; i++) created.push((await apiKeyWithScopes(tenant.api, ['read'], `k${i}`)).key);
      const all = await tenant.api.get('/api/v1/api-keys');
      expect(all.body.total).toBe(4); // with the bootstrap admin key
      const newestFirst = [...all.body.api_keys].sort(
        (x: any, y: any) =>
          Date.parse(y.created_at) - Date.parse(x.created_at) || (y.id < x.id ? -1 : y.id > x.id ? 1 : 0),
      );
      expect(all.body.api_keys).toEqual(newestFirst);
      expect(
        all.body.api_keys
          .slice(0, 3)
          .map((k: { id: string }) => k.id)
          .sort(),
      ).toEqual(created.map((k) => k.id).sort());
      const second = await tenant.api.get('/api/v1/api-keys?page=2&per_page=3');
      expect(second.body).toEqual({ api_keys: [all.body.api_keys[3]], total: 4 });
      expect((await tenant.api.get('/api/v1/api-keys?page=3&per_page=3')).body).toEqual({
        api_keys: [],
        total: 4,
      });
      expectProblem(await tenant.api.get('/api/v1/api-keys?per_page=101'), 400, 'validation_failed');
    });

    it.each([
      ['an empty scopes array', { name: 'k', scopes: [] }, 'scopes'],
      ["an unknown scope 'root'", { name: 'k', scopes: ['root'] }, 'scopes'],
      ['duplicate scopes', { name: 'k', scopes: ['read', 'read'] }, 'scopes'],
      ['scopes that is not an array', { name: 'k', scopes: 'read' }, 'scopes'],
      ['missing scopes', { name: 'k' }, 'scopes'],
      ['a missing name', { scopes: ['read'] }, 'name'],
      ['an empty name', { name: '', scopes: ['read'] }, 'name'],
      ['an unknown field', { name: 'k', scopes: ['read'], expires: 'never' }, 'expires'],
    ])('rejects %s with 400 validation_failed', async (_what, body, field) => {
      const response = await org.api.post('/api/v1/api-keys', body);
      expectProblem(response, 400, 'validation_failed');
      expect(response.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });
  });

  describe('scopes', () => {
    let product: any;
    let license: any;
    let keyPair: any;

    beforeAll(async () => {
      ({ product, keyPair } = await productWithKeyPair(org.api));
      license = await createLicense(org.api, { product_id: product.id });
    });

    it('lets a read key GET products, licenses, key pairs and API keys, and POST verify', async () => {
      const { api } = await apiKeyWithScopes(org.api, ['read']);
      for (const path of [
        '/api/v1/products',
        `/api/v1/products/${product.id}`,
        `/api/v1/products/${product.id}/public-key`,
        '/api/v1/licenses',
        `/api/v1/licenses/${license.id}`,
        `/api/v1/licenses/${license.id}/download`,
        '/api/v1/key-pairs',
        `/api/v1/key-pairs/${keyPair.id}`,
        '/api/v1/api-keys',
        '/v1/licenses',
      ]) {
        const response = await api.get(path);
        expect({ path, status: response.status }).toEqual({ path, status: 200 });
      }
      const verified = await api.post('/api/v1/licenses/verify', {
        license_blob: license.license_blob,
        product_id: product.id,
      });
      expect(verified.status).toBe(200);
      expect(verified.body).toMatchObject({ valid: true, errors: [] });
    });

    it('refuses a read key every write with 403 forbidden, and nothing changes', async () => {
      const { api } = await apiKeyWithScopes(org.api, ['read']);
      const attempts: [string, string, unknown?][] = [
        ['POST', '/api/v1/products', { name: 'Nope', code: uniqueCode('nope') }],
        ['PUT', `/api/v1/products/${product.id}`, { name: 'Renamed' }],
        ['DELETE', `/api/v1/products/${product.id}`],
        ['POST', '/api/v1/licenses', { product_id: product.id }],
        ['DELETE', `/api/v1/licenses/${license.id}`],
        ['DELETE', `/v1/licenses/${license.id}`],
        ['POST', '/api/v1/key-pairs', { name: 'nope' }],
        ['DELETE', `/api/v1/key-pairs/${keyPair.id}`],
        ['POST', '/api/v1/api-keys', { name: 'escalate', scopes: ['admin'] }],
      ];
      for (const [method, path, body] of attempts) {
        const response = await api.request(method, path, body);
        expect({ method, path, status: response.status, code: response.body?.code }).toEqual({
          method,
          path,
          status: 403,
          code: 'forbidden',
        });
        expectProblem(response, 403, 'forbidden');
      }
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body).toMatchObject({
        status: 'active',
        revoked_at: null,
      });
      expect((await org.api.get(`/api/v1/products/${product.id}`)).body.name).toBe(product.name);
      expect((await org.api.get(`/api/v1/licenses?product_id=${product.id}`)).body.total).toBe(1);
    });

    it('lets a client key POST verify and GET a public key', async () => {
      const { api } = await apiKeyWithScopes(org.api, ['client']);
      const verified = await api.post('/api/v1/licenses/verify', {
        license_blob: license.license_blob,
        product_id: product.id,
      });
      expect(verified.status).toBe(200);
      expect(verified.body).toMatchObject({ valid: true, errors: [] });
      const publicKey = await api.get(`/api/v1/products/${product.id}/public-key`);
      expect(publicKey.status).toBe(200);
      expect(publicKey.body).toMatchObject({ product_id: product.id, key_pair_id: keyPair.id });
      expect(publicKey.body.public_key).toContain('BEGIN PUBLIC KEY');
      const viaAlias = await api.post('/v1/licenses/verify', {
        license_blob: license.license_blob,
        public_key: publicKey.body.public_key,
      });
      expect(viaAlias.body).toMatchObject({ valid: true });
    });

    it('refuses a client key listing or reading licenses and products, and creating or revoking, with 403', async () => {
      const { api } = await apiKeyWithScopes(org.api, ['client']);
      const attempts: [string, string, unknown?][] = [
        ['GET', '/api/v1/licenses'],
        ['GET', `/api/v1/licenses/${license.id}`],
        ['GET', `/api/v1/licenses/${license.id}/download`],
        ['GET', '/api/v1/products'],
        ['GET', `/api/v1/products/${product.id}`],
        ['GET', '/api/v1/key-pairs'],
        ['GET', '/api/v1/api-keys'],
        ['POST', '/api/v1/licenses', { product_id: product.id }],
        ['POST', '/api/v1/products', { name: 'Nope', code: uniqueCode('nope') }],
        ['DELETE', `/api/v1/licenses/${license.id}`],
        ['POST', '/api/v1/api-keys', { name: 'escalate', scopes: ['admin'] }],
      ];
      for (const [method, path, body] of attempts) {
        const response = await api.request(method, path, body);
        expect({ method, path, status: response.status }).toEqual({ method, path, status: 403 });
        expectProblem(response, 403, 'forbidden');
      }
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.status).toBe('active');
    });

    it('refuses a scope before it reveals whether the resource exists', async () => {
      const { api } = await apiKeyWithScopes(org.api, ['client']);
      expectProblem(await api.get(`/api/v1/licenses/${randomUUID()}`), 403, 'forbidden');
    });
  });

  describe('request ids', () => {
    it('echoes a sane x-request-id sent by the caller', async () => {
      for (const id of ['req-123', 'a.b:c_d-E', randomUUID(), 'x'.repeat(128)]) {
        const response = await org.api.get('/api/v1/products', { 'x-request-id': id });
        expect(response.status).toBe(200);
        expect(response.headers.get('x-request-id')).toBe(id);
      }
    });

    it('generates a uuid when none is sent, a new one per request', async () => {
      const first = await org.api.get('/api/v1/products');
      const second = await org.api.get('/api/v1/products');
      expect(first.headers.get('x-request-id')).toMatch(UUID);
      expect(second.headers.get('x-request-id')).toMatch(UUID);
      expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
    });

    it('replaces an x-request-id that is not a sane token with a generated uuid', async () => {
      for (const id of ['has spaces in it', 'x'.repeat(129), 'semi;colon', '<script>']) {
        const response = await org.api.get('/api/v1/products', { 'x-request-id': id });
        expect(response.status).toBe(200);
        expect(response.headers.get('x-request-id')).toMatch(UUID);
      }
    });

    it('carries x-request-id on error responses too: 401, 403, 404, 400 and 413', async () => {
      const { api: client } = await apiKeyWithScopes(org.api, ['client']);
      const failures: [number, (headers: Record<string, string>) => Promise<ApiResponse>][] = [
        [401, (h) => stack.anonymous.get('/api/v1/products', h)],
        [403, (h) => client.get('/api/v1/products', h)],
        [404, (h) => org.api.get('/api/v1/no-such-route', h)],
        [404, (h) => org.api.get(`/api/v1/licenses/${randomUUID()}`, h)],
        [400, (h) => org.api.get('/api/v1/licenses/not-a-uuid', h)],
        [400, (h) => org.api.post('/api/v1/products', '{oops', h)],
        [413, (h) => org.api.post('/api/v1/products', bodyOfSize(ONE_MIB + 1), h)],
      ];
      for (const [status, send] of failures) {
        const echoed = await send({ 'x-request-id': `err-${status}` });
        expect({ status: echoed.status, id: echoed.headers.get('x-request-id') }).toEqual({
          status,
          id: `err-${status}`,
        });
        const generated = await send({});
        expect(generated.status).toBe(status);
        expect(generated.headers.get('x-request-id')).toMatch(UUID);
      }
    });
  });

  describe('bodies and routes', () => {
    it('answers 413 payload_too_large for a body over 1 MiB with a valid key', async () => {
      const response = await org.api.post('/api/v1/products', bodyOfSize(ONE_MIB));
      expectProblem(response, 413, 'payload_too_large');
      const onVerify = await org.api.post(
        '/api/v1/licenses/verify',
        JSON.stringify({ license_blob: 'A'.repeat(ONE_MIB + 10) }),
      );
      expectProblem(onVerify, 413, 'payload_too_large');
    });

    it('answers 413 to every client sending a 2 MiB body once it has sent it, never a connection reset', async () => {
      // The client is a process of its own, as a real one is: in this process it would never race the server.
      const outcomes = await new Promise<Record<string, number>>((resolve, reject) => {
        execFile(
          process.execPath,
          ['-e', OVERSIZED_CLIENT, `${stack.baseUrl}/api/v1/products`, org.adminKey],
          { timeout: 60_000 },
          (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout) as Record<string, number>)),
        );
      });
      expect(outcomes).toEqual({ 413: 50 });
    });

    it('reads a body just under 1 MiB and validates it (400, not 413)', async () => {
      const body = bodyOfSize(ONE_MIB - 100);
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(ONE_MIB);
      const response = await org.api.post('/api/v1/products', body);
      expectProblem(response, 400, 'validation_failed');
      expect(response.body.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'name' })]),
      );
    });

    it('answers 400 validation_failed for malformed JSON', async () => {
      for (const text of ['{"name": "broken', '{name: 1}', '[1, 2', 'not json at all']) {
        const response = await org.api.post('/api/v1/products', text);
        expectProblem(response, 400, 'validation_failed');
      }
    });

    it('treats an empty body sent as application/json as no body', async () => {
      const other = await stack.newOrganization();
      const keyPair = await other.api.post('/api/v1/key-pairs', {});
      const deleted = await other.api.request('DELETE', `/api/v1/key-pairs/${keyPair.body.id}`, '', {
        'content-type': 'application/json',
      });
      expect(deleted.status).toBe(200);
      // A POST that needs a body still says which fields are missing.
      const create = await other.api.request('POST', '/api/v1/products', '', {
        'content-type': 'application/json',
      });
      expectProblem(create, 400, 'validation_failed');
      expect(create.body.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'name' })]),
      );
    });

    it('answers 400 validation_failed for a JSON body that is not an object', async () => {
      for (const body of ['"just a string"', '42', 'null', '[]']) {
        const response = await org.api.post('/api/v1/licenses', body);
        expectProblem(response, 400, 'validation_failed');
      }
    });

    it('answers 404 not_found problem+json for an unknown route with a valid key', async () => {
      for (const [method, path] of [
        ['GET', '/api/v1/no-such-thing'],
        ['GET', '/api/v2/products'],
        ['GET', '/products'],
        ['POST', '/api/v1/licenses/nothing/here'],
        ['GET', `/api/v1/licenses/${randomUUID()}/nowhere`],
      ]) {
        const response = await org.api.request(method!, path!, method === 'POST' ? {} : undefined);
        expect({ path, status: response.status }).toEqual({ path, status: 404 });
        expectProblem(response, 404, 'not_found');
      }
    });
  });

  describe('OpenAPI', () => {
    it('serves GET /openapi.json without authentication: an OpenAPI 3 document with every route once, served under both prefixes', async () => {
      const response = await stack.anonymous.get('/openapi.json');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/json/);
      const document = response.body;
      expect(document.openapi).toMatch(/^3\.\d+\.\d+$/);
      expect(typeof document.info?.title).toBe('string');

      const routes: [string, string[]][] = [
        ['/products', ['get', 'post']],
        ['/products/{id}', ['get', 'put', 'delete']],
        ['/products/{id}/public-key', ['get']],
        ['/licenses', ['get', 'post']],
        ['/licenses/{id}', ['get', 'patch', 'delete']],
        ['/licenses/{id}/download', ['get']],
        ['/licenses/{id}/usage', ['get']],
        ['/licenses/verify', ['post']],
        ['/licenses/validate', ['post']],
        ['/licenses/check-revocation', ['post']],
        ['/licenses/sync', ['post']],
        ['/activations', ['get', 'post']],
        ['/activations/{id}', ['delete']],
        ['/activations/{id}/heartbeat', ['post']],
        ['/analytics/usage', ['get']],
        ['/analytics/features', ['get']],
        ['/analytics/versions', ['get']],
        ['/key-pairs', ['get', 'post']],
        ['/key-pairs/{id}', ['get', 'delete']],
        ['/api-keys', ['get', 'post']],
        ['/api-keys/{id}', ['delete']],
      ];
      // Each route is listed once, under a server whose `prefix` variable names both prefixes.
      expect(document.servers[0].variables.prefix.enum).toEqual(['api/v1', 'v1']);
      const served = servedPaths(document);
      for (const prefix of ['/api/v1', '/v1']) {
        for (const [route, methods] of routes) {
          const path = `${prefix}${route}`;
          expect({ path, served: served.some((entry) => entry.path === path) }).toEqual({
            path,
            served: true,
          });
          for (const method of methods) {
            expect({ route, method, present: method in document.paths[route] }).toEqual({
              route,
              method,
              present: true,
            });
          }
        }
      }

      for (const schema of [
        'CreateProductDto',
        'CreateLicenseDto',
        'VerifyLicenseDto',
        'UpdateLicenseDto',
        'CheckRevocationDto',
        'SyncReportDto',
        'CreateActivationDto',
        'ValidateLicenseDto',
      ]) {
        expect({ schema, present: schema in (document.components?.schemas ?? {}) }).toEqual({
          schema,
          present: true,
        });
      }
      const bodyRef = (path: string, method: string) =>
        document.paths[path][method].requestBody?.content?.['application/json']?.schema?.$ref;
      expect(bodyRef('/products', 'post')).toBe('#/components/schemas/CreateProductDto');
      expect(bodyRef('/licenses', 'post')).toBe('#/components/schemas/CreateLicenseDto');
      expect(bodyRef('/licenses/verify', 'post')).toBe('#/components/schemas/VerifyLicenseDto');
      const createLicense = document.components.schemas.CreateLicenseDto;
      // Neither field alone is required: a license names its product, or a policy that does.
      expect(createLicense.required).toBeUndefined();
      expect(Object.keys(createLicense.properties)).toEqual(
        expect.arrayContaining([
          'product_id',
          'policy_id',
          'license_type',
          'customer_id',
          'customer_email',
          'features',
          'valid_days',
          'max_seats',
          'hardware_binding',
        ]),
      );
    });

    it('answers GET / without a key: an index of where the API, its documentation and its keys are', async () => {
      const response = await stack.anonymous.get('/');
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        api: '/api/v1',
        api_aliases: ['/v1'],
        docs: '/docs',
        console: '/console/',
        openapi: '/openapi.json',
        get_an_api_key: expect.stringContaining('npm run operator -- keys create'),
      });
      expect((await stack.anonymous.get(response.body.openapi)).status).toBe(200);
      expect((await stack.anonymous.get(response.body.docs)).status).toBe(200);
      // Only the index itself is public: what follows `/` is authenticated as before.
      expect((await stack.anonymous.get('/api/v1/products')).status).toBe(401);
    });

    it('serves /openapi.json even when a bad key is sent', async () => {
      const response = await stack.anonymous.get('/openapi.json', {
        authorization: `Bearer ${unknownKey()}`,
      });
      expect(response.status).toBe(200);
      expect(response.body.openapi).toMatch(/^3\./);
    });

    it('serves GET /docs as HTML without authentication', async () => {
      const response = await stack.anonymous.get('/docs');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.text).toMatch(/<html/i);
      // Every asset the page loads is public too, or the page would be blank.
      const assets = [...response.text.matchAll(/(?:src|href)="\.\/(docs\/[^"]+\.(?:js|css))"/g)].map(
        (m) => `/${m[1]}`,
      );
      expect(assets.length).toBeGreaterThan(0);
      for (const asset of assets) {
        const loaded = await stack.anonymous.get(asset);
        expect({ asset, status: loaded.status }).toEqual({ asset, status: 200 });
      }
    });
  });
});
