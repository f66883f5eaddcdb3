import { createHash, randomUUID } from 'node:crypto';
import { ApiClient, ApiResponse } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, productWithKeyPair, sql, uniqueCode } from './support/fixtures';

const REPLAYED = 'idempotent-replayed';
const newKey = (): string => `key-${randomUUID()}`;
const withKey = (key: string): Record<string, string> => ({ 'idempotency-key': key });
const storedRows = (orgId: string, key: string) =>
  sql('SELECT * FROM identity.idempotency_keys WHERE org_id = $1 AND key = $2', [orgId, key]);

/** Retrying a create with an Idempotency-Key: the first answer again, never a second resource. */
describe('idempotency keys on create routes', () => {
  let stack: TestStack;
  let org: TestOrganization;

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
  });
  afterAll(() => stack.close());

  it('replays the first answer to a repeat with the same body, in any member order or layout, and creates nothing more', async () => {
    const { api } = await stack.newOrganization();
    const key = newKey();
    const code = uniqueCode();
    const first = await api.post('/api/v1/products', `{"name":"Editor","code":"${code}"}`, withKey(key));
    expect(first.status).toBe(201);
    expect(first.headers.get(REPLAYED)).toBeNull();

    const repeat = await api.post(
      '/api/v1/products',
      `{\n  "code": "${code}",\n  "name": "Editor"\n}`,
      withKey(key),
    );
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get(REPLAYED)).toBe('true');
    expect(repeat.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(repeat.text).toBe(first.text);

    // Both URL prefixes are one route.
    const other = await api.post('/v1/products', { name: 'Editor', code }, withKey(key));
    expect(other.status).toBe(201);
    expect(other.body).toEqual(first.body);
    expect((await api.get('/api/v1/products')).body.total).toBe(1);
  });

  it('answers 409 conflict to the same key with another body, and creates nothing', async () => {
    const { api } = await stack.newOrganization();
    const key = newKey();
    expect((await api.post('/api/v1/key-pairs', { name: 'first' }, withKey(key))).status).toBe(201);
    const changed = await api.post('/api/v1/key-pairs', { name: 'second' }, withKey(key));
    expect(changed.status).toBe(409);
    expect(changed.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(changed.body).toMatchObject({ status: 409, code: 'conflict' });
    expect(changed.body.detail).toMatch(/different request body/);
    expect((await api.get('/api/v1/key-pairs')).body.total).toBe(1);
  });

  it('answers 409 conflict to the same key on another route', async () => {
    const { api } = await stack.newOrganization();
    const key = newKey();
    expect((await api.post('/api/v1/key-pairs', { name: 'k' }, withKey(key))).status).toBe(201);
    const elsewhere = await api.post('/api/v1/api-keys', { name: 'k', scopes: ['read'] }, withKey(key));
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body).toMatchObject({ code: 'conflict' });
    expect(elsewhere.body.detail).toMatch(/another route \(POST \/v1\/key-pairs\)/);
  });

  it('scopes a key to its organization: another organization with the same key creates its own resource', async () => {
    const key = newKey();
    const other = await stack.newOrganization();
    const mine = await org.api.post('/api/v1/key-pairs', { name: 'shared key' }, withKey(key));
    const theirs = await other.api.post('/api/v1/key-pairs', { name: 'shared key' }, withKey(key));
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get(REPLAYED)).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('creates exactly one license from 10 concurrent requests with one key; the others replay it or are 409', async () => {
    const { product } = await productWithKeyPair(org.api);
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        org.api.post('/api/v1/licenses', { product_id: product.id, max_seats: 3 }, withKey(key)),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created.filter((a) => a.headers.get(REPLAYED) === null)).toHaveLength(1);
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    for (const answer of answers.filter((a) => a.status !== 201)) {
      expect(answer.body).toMatchObject({ status: 409, code: 'conflict' });
    }
    const listed = await org.api.get(`/api/v1/licenses?product_id=${product.id}`);
    expect(listed.body.total).toBe(1);
  });

  it('answers a license create with a key (Nest pipeline) as one without (served directly), and replays it', async () => {
    const { product } = await productWithKeyPair(org.api);
    const body = { product_id: product.id, customer_email: 'ada@example.com' };
    const direct = await org.api.post('/api/v1/licenses', body);
    const key = newKey();
    const keyed = await org.api.post('/api/v1/licenses', body, withKey(key));
    const replayed = await org.api.post('/api/v1/licenses', body, withKey(key));
    for (const answer of [direct, keyed, replayed]) {
      expect(answer.status).toBe(201);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
    const members = (answer: typeof direct) => Object.keys(answer.body as object);
    expect(members(keyed)).toEqual(members(direct));
    expect(keyed.body).toMatchObject({ product_id: product.id, customer_email: 'ada@example.com' });
    expect(keyed.body.license_blob).toEqual(expect.any(String));
    expect(replayed.headers.get(REPLAYED)).toBe('true');
    expect(replayed.text).toBe(keyed.text);
  });

  it('stores a 4xx and replays it, even once the cause is gone', async () => {
    const { product, keyPair } = await productWithKeyPair(org.api, { key_pair_id: null });
    const key = newKey();
    const body = { product_id: product.id };
    const first = await org.api.post('/api/v1/licenses', body, withKey(key));
    expect(first.status).toBe(422);
    expect(first.body.code).toBe('key_pair_missing');

    const fixed = await org.api.put(`/api/v1/products/${product.id}`, { key_pair_id: keyPair.id });
    expect(fixed.status).toBe(200);
    const repeat = await org.api.post('/api/v1/licenses', body, withKey(key));
    expect(repeat.status).toBe(422);
    expect(repeat.headers.get(REPLAYED)).toBe('true');
    expect(repeat.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(repeat.body).toEqual(first.body);
    // A new key runs the request again, and now it succeeds.
    expect((await org.api.post('/api/v1/licenses', body, withKey(newKey()))).status).toBe(201);
  });

  it('does not store a 5xx: a retry with the same key runs again', async () => {
    const { product } = await productWithKeyPair(org.api);
    const key = newKey();
    const body = { product_id: product.id };
    await stack.stopService('license-service');
    try {
      const down = await org.api.post('/api/v1/licenses', body, withKey(key));
      expect(down.status).toBe(503);
      expect(down.body.code).toBe('unavailable');
      expect(await storedRows(org.id, key)).toEqual([]);
    } finally {
      await stack.startService('license-service');
    }
    const retry = await org.api.post('/api/v1/licenses', body, withKey(key));
    expect(retry.status).toBe(201);
    expect(retry.headers.get(REPLAYED)).toBeNull();
    const again = await org.api.post('/api/v1/licenses', body, withKey(key));
    expect(again.headers.get(REPLAYED)).toBe('true');
    expect(again.body.id).toBe(retry.body.id);
    expect((await org.api.get(`/api/v1/licenses?product_id=${product.id}`)).body.total).toBe(1);
  });

  it.each([
    ['empty', ''],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['holding a control character', 'a\tb'],
    ['not ASCII', 'cl\u00e9'],
  ])(
    'answers 400 validation_failed naming the header when it is %s, and creates nothing',
    async (_, value) => {
      const { api } = await stack.newOrganization();
      const answer = await api.post('/api/v1/key-pairs', { name: 'x' }, withKey(value));
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({
        code: 'validation_failed',
        errors: [{ field: 'Idempotency-Key', message: expect.any(String) }],
      });
      expect((await api.get('/api/v1/key-pairs')).body.total).toBe(0);
    },
  );

  describe('on every create route', () => {
    const routes: [string, string, (api: ApiClient) => Promise<Record<string, unknown>>][] = [
      ['key pairs', '/api/v1/key-pairs', async () => ({ name: 'signing', algorithm: 'ecdsa-p256' })],
      ['products', '/api/v1/products', async () => ({ name: 'Editor', code: uniqueCode() })],
      [
        'licenses',
        '/api/v1/licenses',
        async (api) => ({ product_id: (await productWithKeyPair(api)).product.id }),
      ],
      [
        'activations',
        '/v1/activations',
        async (api) => {
          const { product } = await productWithKeyPair(api);
          const license = await createLicense(api, { product_id: product.id, max_seats: 5 });
          return { license_id: license.id, fingerprint: 'machine-1' };
        },
      ],
      ['API keys', '/api/v1/api-keys', async () => ({ name: 'ci', scopes: ['read'] })],
    ];

    it.each(routes)(
      '%s: a repeat is the first answer again, and one resource exists',
      async (_, path, bodyFor) => {
        const { api } = await stack.newOrganization();
        const body = await bodyFor(api);
        const key = newKey();
        const before = (await api.get(path)).body.total as number;
        const first = await api.post(path, body, withKey(key));
        expect(first.status).toBe(201);
        const repeat = await api.post(path, body, withKey(key));
        expect(repeat.status).toBe(201);
        expect(repeat.headers.get(REPLAYED)).toBe('true');
        expect(repeat.text).toBe(first.text);
        expect((await api.get(path)).body.total).toBe(before + 1);
      },
    );
  });

  it("keeps a new API key's secret out of the database, and replays it only to the API key that created it", async () => {
    const key = newKey();
    const first = await org.api.post(
      '/api/v1/api-keys',
      { name: 'deploy', scopes: ['client'] },
      withKey(key),
    );
    expect(first.status).toBe(201);
    const [row] = await storedRows(org.id, key);
    expect(JSON.stringify(row.response_body)).not.toContain(first.body.key);
    expect(row.response_body).toMatchObject({ id: first.body.id, key: { sealed: expect.any(String) } });

    const repeat = await org.api.post(
      '/api/v1/api-keys',
      { name: 'deploy', scopes: ['client'] },
      withKey(key),
    );
    expect(repeat.body.key).toBe(first.body.key);
    const { api: otherAdmin } = await apiKeyWithScopes(org.api, ['admin']);
    const stranger = await otherAdmin.post(
      '/api/v1/api-keys',
      { name: 'deploy', scopes: ['client'] },
      withKey(key),
    );
    expect(stranger.status).toBe(409);
    expect(stranger.body.detail).toMatch(/only the API key which sent it/);
  });

  it('ignores the header on a GET and on a POST that creates nothing', async () => {
    const { product, keyPair } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id });
    const key = newKey();
    const read = await org.api.get(`/api/v1/products/${product.id}`, withKey(key));
    expect(read.status).toBe(200);
    expect(read.headers.get(REPLAYED)).toBeNull();
    const verify = (productId: string): Promise<ApiResponse> =>
      org.api.post(
        '/api/v1/licenses/verify',
        { license_blob: license.license_blob, product_id: productId },
        withKey(key),
      );
    expect((await verify(product.id)).body.valid).toBe(true);
    // Another body with the same key is no conflict here: the header means nothing on this route.
    const other = await productWithKeyPair(org.api);
    const second = await verify(other.product.id);
    expect(second.status).toBe(200);
    expect(second.headers.get(REPLAYED)).toBeNull();
    expect(second.body.errors.map((e: { code: string }) => e.code)).toContain('product_mismatch');
    // Even a malformed key is no 400 where the header is not used.
    expect((await org.api.get(`/api/v1/key-pairs/${keyPair.id}`, withKey(''))).status).toBe(200);
    expect(await storedRows(org.id, key)).toEqual([]);
  });

  describe('a key whose first request is still running', () => {
    const claim = async (key: string, body: Record<string, unknown>, lockedAgo: string) => {
      const canonical = JSON.stringify(Object.fromEntries(Object.entries(body).sort()));
      await sql(
        `INSERT INTO identity.idempotency_keys
                (id, org_id, key, route, request_hash, claim_token, locked_at, created_at, expires_at)
         VALUES ($1, $2, $3, 'POST /v1/key-pairs', $4, $5, now() - $6::interval, now(), now() + interval '1 day')`,
        [
          randomUUID(),
          org.id,
          key,
          createHash('sha256').update(canonical).digest('hex'),
          randomUUID(),
          lockedAgo,
        ],
      );
    };

    it('makes a repeat wait for it, then answers 409 conflict if it does not finish', async () => {
      const key = newKey();
      await claim(key, { name: 'slow' }, '0 seconds');
      const started = Date.now();
      const repeat = await org.api.post('/api/v1/key-pairs', { name: 'slow' }, withKey(key));
      expect(repeat.status).toBe(409);
      expect(repeat.body.detail).toMatch(/still in progress/);
      expect(repeat.headers.get('retry-after')).toBe('1');
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    });

    it('is taken over once its lease has run out (its gateway died mid-request), and the retry runs', async () => {
      const key = newKey();
      await claim(key, { name: 'orphan' }, '1 hour');
      const retry = await org.api.post('/api/v1/key-pairs', { name: 'orphan' }, withKey(key));
      expect(retry.status).toBe(201);
      expect(retry.headers.get(REPLAYED)).toBeNull();
      const [row] = await storedRows(org.id, key);
      expect(row).toMatchObject({ status: 201, response_body: { id: retry.body.id } });
    });
  });

  it('documents the header on the create routes of the OpenAPI document, and only there', async () => {
    const document = (await stack.anonymous.get('/openapi.json')).body;
    const takesKey = (path: string, method: string): boolean =>
      (document.paths[path][method].parameters ?? []).some(
        (parameter: { name: string; in: string }) =>
          parameter.name === 'Idempotency-Key' && parameter.in === 'header',
      );
    for (const path of ['/licenses', '/products', '/key-pairs', '/activations', '/api-keys', '/webhooks']) {
      expect([path, takesKey(path, 'post')]).toEqual([path, true]);
    }
    expect(takesKey('/licenses', 'get')).toBe(false);
    expect(takesKey('/licenses/verify', 'post')).toBe(false);
  });
});
