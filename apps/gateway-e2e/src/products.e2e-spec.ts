import { createHash, createPublicKey, randomUUID } from 'node:crypto';
import { ApiClient, ApiResponse, waitFor } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { createLicense, productWithKeyPair, uniqueCode } from './support/fixtures';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PRODUCT_FIELDS = [
  'activation_heartbeat_interval',
  'code',
  'created_at',
  'default_features',
  'default_valid_days',
  'description',
  'id',
  'key_pair_id',
  'max_concurrent_activations',
  'name',
  'updated_at',
];
const KEY_PAIR_FIELDS = ['algorithm', 'created_at', 'fingerprint', 'id', 'name', 'public_key'];

/** An RFC 9457 problem with the given status and code; for validation failures, `errors` names `field`. */
function expectProblem(response: ApiResponse, status: number, code: string, field?: string): void {
  expect({ status: response.status, code: response.body?.code }).toEqual({ status, code });
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ type: 'about:blank', status, code, detail: expect.any(String) });
  if (field !== undefined) {
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
  }
  if (code !== 'validation_failed') expect(response.body.errors).toBeUndefined();
}

/** Newest `created_at` first, ties broken by id descending (docs/api.md). */
function newestFirst<T extends { id: string; created_at: string }>(items: T[]): T[] {
  return [...items].sort((a, b) =>
    a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1,
  );
}

async function createKeyPair(api: ApiClient, body: Record<string, unknown> = {}): Promise<any> {
  const created = await api.post('/api/v1/key-pairs', body);
  expect(created.status).toBe(201);
  return created.body;
}

async function createProduct(api: ApiClient, body: Record<string, unknown> = {}): Promise<any> {
  const created = await api.post('/api/v1/products', { name: 'Photo Editor', code: uniqueCode(), ...body });
  expect(created.status).toBe(201);
  return created.body;
}

async function productTotal(api: ApiClient): Promise<number> {
  const list = await api.get('/api/v1/products?per_page=1');
  expect(list.status).toBe(200);
  return list.body.total;
}

/** Resolves once the wall clock has moved past `iso`, so that a later write gets a later timestamp. */
async function clockPast(iso: string): Promise<void> {
  await waitFor(() => Date.now() > Date.parse(iso) + 1, { intervalMs: 2, what: `the clock to pass ${iso}` });
}

describe('products, key pairs and product public keys through the gateway', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
    other = await stack.newOrganization();
  });
  afterAll(() => stack?.close());

  describe('products', () => {
    it('creates a product: 201 with every field, documented defaults, and created_at equal to updated_at', async () => {
      const code = uniqueCode('photo');
      const before = Date.now();
      const created = await org.api.post('/api/v1/products', { name: 'Photo Editor', code });
      expect(created.status).toBe(201);
      expect(created.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Object.keys(created.body).sort()).toEqual(PRODUCT_FIELDS);
      expect(created.body).toEqual({
        id: expect.stringMatching(UUID),
        name: 'Photo Editor',
        code,
        description: '',
        default_features: [],
        default_valid_days: 365,
        key_pair_id: null,
        max_concurrent_activations: null,
        activation_heartbeat_interval: null,
        created_at: expect.stringMatching(ISO_MS_UTC),
        updated_at: created.body.created_at,
      });
      expect(Date.parse(created.body.created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(created.body.created_at)).toBeLessThanOrEqual(Date.now() + 1000);

      const fetched = await org.api.get(`/api/v1/products/${created.body.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(created.body);
    });

    it('creates a product with every optional field and returns them as given', async () => {
      const keyPair = await createKeyPair(org.api);
      const body = {
        name: 'Video Suite',
        code: uniqueCode('video'),
        description: 'Edits video',
        default_features: ['pro', 'export'],
        default_valid_days: 30,
        key_pair_id: keyPair.id,
        max_concurrent_activations: 5,
        activation_heartbeat_interval: 3600,
      };
      const created = await org.api.post('/api/v1/products', body);
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        ...body,
        id: expect.stringMatching(UUID),
        created_at: expect.stringMatching(ISO_MS_UTC),
        updated_at: created.body.created_at,
      });
      expect((await org.api.get(`/api/v1/products/${created.body.id}`)).body).toEqual(created.body);
    });

    describe('create validation (400 validation_failed, nothing created)', () => {
      let clean: TestOrganization;
      beforeAll(async () => {
        clean = await stack.newOrganization();
      });

      it.each<[string, Record<string, unknown>, string]>([
        ['name is missing', { code: 'valid-code' }, 'name'],
        ['name is empty', { name: '', code: 'valid-code' }, 'name'],
        ['name is longer than 255 characters', { name: 'n'.repeat(256), code: 'valid-code' }, 'name'],
        ['name is not a string', { name: 42, code: 'valid-code' }, 'name'],
        ['name is null', { name: null, code: 'valid-code' }, 'name'],
        ['code is missing', { name: 'App' }, 'code'],
        ['code is empty', { name: 'App', code: '' }, 'code'],
        ['code has uppercase letters', { name: 'App', code: 'Photo-Editor' }, 'code'],
        ['code has a space', { name: 'App', code: 'photo editor' }, 'code'],
        ['code starts with a hyphen', { name: 'App', code: '-photo' }, 'code'],
        ['code ends with a hyphen', { name: 'App', code: 'photo-' }, 'code'],
        ['code has a double hyphen', { name: 'App', code: 'photo--editor' }, 'code'],
        ['code has an underscore', { name: 'App', code: 'photo_editor' }, 'code'],
        ['code is longer than 100 characters', { name: 'App', code: 'a'.repeat(101) }, 'code'],
        ['code is not a string', { name: 'App', code: 7 }, 'code'],
        ['an unknown field is sent', { name: 'App', code: 'valid-code', colour: 'red' }, 'colour'],
        [
          'default_valid_days is a numeric string',
          { name: 'App', code: 'valid-code', default_valid_days: '10' },
          'default_valid_days',
        ],
        [
          'default_valid_days is fractional',
          { name: 'App', code: 'valid-code', default_valid_days: 1.5 },
          'default_valid_days',
        ],
        [
          'default_valid_days is negative',
          { name: 'App', code: 'valid-code', default_valid_days: -1 },
          'default_valid_days',
        ],
        [
          'default_features is not an array',
          { name: 'App', code: 'valid-code', default_features: 'pro' },
          'default_features',
        ],
        [
          'default_features holds a number',
          { name: 'App', code: 'valid-code', default_features: [1] },
          'default_features',
        ],
        ['description is not a string', { name: 'App', code: 'valid-code', description: 42 }, 'description'],
        [
          'key_pair_id is not a UUID',
          { name: 'App', code: 'valid-code', key_pair_id: 'not-a-uuid' },
          'key_pair_id',
        ],
        [
          'max_concurrent_activations is 0',
          { name: 'App', code: 'valid-code', max_concurrent_activations: 0 },
          'max_concurrent_activations',
        ],
        [
          'max_concurrent_activations is a string',
          { name: 'App', code: 'valid-code', max_concurrent_activations: '5' },
          'max_concurrent_activations',
        ],
        [
          'activation_heartbeat_interval is 0',
          { name: 'App', code: 'valid-code', activation_heartbeat_interval: 0 },
          'activation_heartbeat_interval',
        ],
        [
          'activation_heartbeat_interval is above 7 days',
          { name: 'App', code: 'valid-code', activation_heartbeat_interval: 604_801 },
          'activation_heartbeat_interval',
        ],
        [
          'activation_heartbeat_interval is fractional',
          { name: 'App', code: 'valid-code', activation_heartbeat_interval: 1.5 },
          'activation_heartbeat_interval',
        ],
      ])('rejects a create where %s, naming the field', async (_label, body, field) => {
        const response = await clean.api.post('/api/v1/products', body);
        expectProblem(response, 400, 'validation_failed', field);
        expect(await productTotal(clean.api)).toBe(0);
      });

      it('rejects a body over 1 MiB with 413 payload_too_large', async () => {
        const response = await clean.api.post('/api/v1/products', {
          name: 'Big',
          code: 'big',
          description: 'x'.repeat(1024 * 1024 + 1),
        });
        expectProblem(response, 413, 'payload_too_large');
        expect(await productTotal(clean.api)).toBe(0);
      });

      it('rejects malformed JSON with 400 validation_failed', async () => {
        const response = await clean.api.post('/api/v1/products', '{"name": "App", "code": ');
        expectProblem(response, 400, 'validation_failed');
        expect(await productTotal(clean.api)).toBe(0);
      });

      it('rejects a JSON body that is not an object', async () => {
        expectProblem(await clean.api.post('/api/v1/products', '["App"]'), 400, 'validation_failed');
        expectProblem(await clean.api.post('/api/v1/products', 'null'), 400, 'validation_failed');
        expect(await productTotal(clean.api)).toBe(0);
      });

      it.each([
        ['GET', '/api/v1/products/not-a-uuid'],
        ['PUT', '/api/v1/products/not-a-uuid'],
        ['DELETE', '/api/v1/products/not-a-uuid'],
        ['GET', '/api/v1/products/not-a-uuid/public-key'],
        ['GET', '/v1/products/12345'],
      ])('answers %s %s (a path id that is not a UUID) with 400 naming id', async (method, path) => {
        const response = await clean.api.request(method, path, method === 'PUT' ? { name: 'x' } : undefined);
        expectProblem(response, 400, 'validation_failed', 'id');
      });
    });

    it('refuses a duplicate code in the same organization with 409 conflict, while another organization may use it', async () => {
      const code = uniqueCode('dup');
      await createProduct(org.api, { code });
      const totalBefore = await productTotal(org.api);

      const duplicate = await org.api.post('/api/v1/products', { name: 'Another name', code });
      expectProblem(duplicate, 409, 'conflict');
      expect(duplicate.body.detail).toContain(code);
      expect(await productTotal(org.api)).toBe(totalBefore);

      const elsewhere = await other.api.post('/api/v1/products', { name: 'Same code, other tenant', code });
      expect(elsewhere.status).toBe(201);
      expect(elsewhere.body.code).toBe(code);
    });

    it('lets exactly one of several concurrent creates with the same code succeed; the others are 409 conflict', async () => {
      const code = uniqueCode('same');
      const responses = await Promise.all(
        Array.from({ length: 8 }, (_, i) => org.api.post('/api/v1/products', { name: `Racer ${i}`, code })),
      );
      expect(responses.filter((response) => response.status === 201)).toHaveLength(1);
      for (const response of responses.filter((r) => r.status !== 201))
        expectProblem(response, 409, 'conflict');
      const list = await org.api.get('/api/v1/products?per_page=100');
      expect(list.body.products.filter((product: { code: string }) => product.code === code)).toHaveLength(1);
    });

    it('frees the code of a deleted product for a new product', async () => {
      const first = await createProduct(org.api);
      expect((await org.api.delete(`/api/v1/products/${first.id}`)).status).toBe(200);
      const second = await org.api.post('/api/v1/products', { name: 'Second life', code: first.code });
      expect(second.status).toBe(201);
      expect(second.body.id).not.toBe(first.id);
      expectProblem(await org.api.get(`/api/v1/products/${first.id}`), 404, 'not_found');
    });

    it('answers 404 not_found for a key_pair_id that does not exist, and creates nothing', async () => {
      const totalBefore = await productTotal(org.api);
      const missing = randomUUID();
      const response = await org.api.post('/api/v1/products', {
        name: 'App',
        code: uniqueCode(),
        key_pair_id: missing,
      });
      expectProblem(response, 404, 'not_found');
      expect(response.body.detail).toMatch(/key pair/i);
      expect(response.body.detail).toContain(missing);
      expect(await productTotal(org.api)).toBe(totalBefore);
    });

    it("answers 404 not_found for another organization's key pair, and creates nothing", async () => {
      const foreign = await createKeyPair(other.api);
      const totalBefore = await productTotal(org.api);
      const code = uniqueCode();
      const response = await org.api.post('/api/v1/products', { name: 'App', code, key_pair_id: foreign.id });
      expectProblem(response, 404, 'not_found');
      expect(response.body.detail).toContain(foreign.id);
      expect(await productTotal(org.api)).toBe(totalBefore);
      // the code was not taken by a half-created product
      expect((await org.api.post('/api/v1/products', { name: 'App', code })).status).toBe(201);
    });

    describe('list', () => {
      let lister: TestOrganization;
      let created: any[];

      beforeAll(async () => {
        lister = await stack.newOrganization();
        created = [];
        for (let i = 0; i < 5; i++) created.push(await createProduct(lister.api, { name: `Product ${i}` }));
        await createProduct(other.api, { name: 'Not yours' });
      });

      it('lists newest first with a total counting every product', async () => {
        const list = await lister.api.get('/api/v1/products');
        expect(list.status).toBe(200);
        expect(list.body.total).toBe(5);
        expect(list.body.products).toEqual(newestFirst(created));
        // created one after the other, so the last one created comes first
        expect(list.body.products[0].id).toBe(created[4].id);
        expect(list.body.products[4].id).toBe(created[0].id);
      });

      it('pages with page and per_page; a page past the end is 200 and empty with the right total', async () => {
        const all = newestFirst(created).map((product) => product.id);
        const pages = [];
        for (const page of [1, 2, 3]) {
          const response = await lister.api.get(`/api/v1/products?page=${page}&per_page=2`);
          expect(response.status).toBe(200);
          expect(response.body.total).toBe(5);
          pages.push(response.body.products.map((product: { id: string }) => product.id));
        }
        expect(pages.map((ids) => ids.length)).toEqual([2, 2, 1]);
        expect(pages.flat()).toEqual(all);

        const pastEnd = await lister.api.get('/api/v1/products?page=4&per_page=2');
        expect(pastEnd.status).toBe(200);
        expect(pastEnd.body).toEqual({ products: [], total: 5 });

        const farPastEnd = await lister.api.get('/api/v1/products?page=1000');
        expect(farPastEnd.status).toBe(200);
        expect(farPastEnd.body).toEqual({ products: [], total: 5 });

        const max = await lister.api.get('/api/v1/products?per_page=100');
        expect(max.status).toBe(200);
        expect(max.body.products.map((product: { id: string }) => product.id)).toEqual(all);
      });

      it.each([
        ['per_page=0', 'per_page'],
        ['per_page=101', 'per_page'],
        ['per_page=abc', 'per_page'],
        ['per_page=2.5', 'per_page'],
        ['page=0', 'page'],
        ['page=-1', 'page'],
        ['page=abc', 'page'],
        ['page=1.5', 'page'],
        ['page=', 'page'],
      ])('rejects ?%s with 400 validation_failed naming the parameter', async (query, field) => {
        expectProblem(await lister.api.get(`/api/v1/products?${query}`), 400, 'validation_failed', field);
      });

      it('orders products created at the same moment by id descending, so that pages never overlap or skip', async () => {
        const burst = await stack.newOrganization();
        const responses = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            burst.api.post('/api/v1/products', { name: `Burst ${i}`, code: uniqueCode('burst') }),
          ),
        );
        expect(responses.map((response) => response.status)).toEqual(Array(12).fill(201));
        const expected = newestFirst(responses.map((response) => response.body)).map((product) => product.id);

        const whole = await burst.api.get('/api/v1/products?per_page=100');
        expect(whole.body.products.map((product: { id: string }) => product.id)).toEqual(expected);
        const paged: string[] = [];
        for (let page = 1; page <= 4; page++) {
          const response = await burst.api.get(`/api/v1/products?page=${page}&per_page=5`);
          expect(response.body.total).toBe(12);
          paged.push(...response.body.products.map((product: { id: string }) => product.id));
        }
        expect(paged).toEqual(expected);
      });

      it("never shows another organization's products", async () => {
        const mine = await lister.api.get('/api/v1/products?per_page=100');
        const theirs = await other.api.get('/api/v1/products?per_page=100');
        expect(theirs.status).toBe(200);
        const theirIds = new Set(theirs.body.products.map((product: { id: string }) => product.id));
        expect(theirs.body.products.length).toBeGreaterThan(0);
        for (const product of mine.body.products) expect(theirIds.has(product.id)).toBe(false);
        for (const product of created) expect(theirIds.has(product.id)).toBe(false);
      });
    });

    it("answers 404 (never 403) to get, put and delete of another organization's product, and changes nothing", async () => {
      const theirs = await createProduct(other.api, { name: 'Theirs' });
      const get = await org.api.get(`/api/v1/products/${theirs.id}`);
      expectProblem(get, 404, 'not_found');
      const put = await org.api.put(`/api/v1/products/${theirs.id}`, { name: 'Hijacked' });
      expectProblem(put, 404, 'not_found');
      const del = await org.api.delete(`/api/v1/products/${theirs.id}`);
      expectProblem(del, 404, 'not_found');

      const unknown = randomUUID();
      expectProblem(await org.api.get(`/api/v1/products/${unknown}`), 404, 'not_found');
      expectProblem(await org.api.put(`/api/v1/products/${unknown}`, { name: 'x' }), 404, 'not_found');

      const still = await other.api.get(`/api/v1/products/${theirs.id}`);
      expect(still.status).toBe(200);
      expect(still.body).toEqual(theirs);
    });

    describe('update (PUT)', () => {
      it('updates only the given fields, bumps updated_at and leaves created_at', async () => {
        const keyPair = await createKeyPair(org.api);
        const original = await createProduct(org.api, {
          description: 'Before',
          default_features: ['basic'],
          default_valid_days: 30,
          key_pair_id: keyPair.id,
          max_concurrent_activations: 3,
          activation_heartbeat_interval: 600,
        });
        await clockPast(original.updated_at);

        const renamed = await org.api.put(`/api/v1/products/${original.id}`, {
          name: 'Renamed',
          default_features: ['pro'],
        });
        expect(renamed.status).toBe(200);
        expect(renamed.body).toEqual({
          ...original,
          name: 'Renamed',
          default_features: ['pro'],
          updated_at: expect.stringMatching(ISO_MS_UTC),
        });
        expect(renamed.body.updated_at > original.updated_at).toBe(true);
        expect(renamed.body.created_at).toBe(original.created_at);
        expect((await org.api.get(`/api/v1/products/${original.id}`)).body).toEqual(renamed.body);

        await clockPast(renamed.body.updated_at);
        const described = await org.api.put(`/v1/products/${original.id}`, {
          description: '',
          default_valid_days: 0,
        });
        expect(described.status).toBe(200);
        expect(described.body).toEqual({
          ...renamed.body,
          description: '',
          default_valid_days: 0,
          updated_at: expect.stringMatching(ISO_MS_UTC),
        });
        expect(described.body.updated_at > renamed.body.updated_at).toBe(true);
      });

      it('refuses code on update with 400, even when unchanged, and keeps the product as it was', async () => {
        const product = await createProduct(org.api);
        const unchanged = await org.api.put(`/api/v1/products/${product.id}`, { code: product.code });
        expectProblem(unchanged, 400, 'validation_failed', 'code');
        const changed = await org.api.put(`/api/v1/products/${product.id}`, {
          name: 'New',
          code: uniqueCode(),
        });
        expectProblem(changed, 400, 'validation_failed', 'code');
        expect((await org.api.get(`/api/v1/products/${product.id}`)).body).toEqual(product);
      });

      it.each<[string, Record<string, unknown>, string]>([
        ['name is null', { name: null }, 'name'],
        ['name is empty', { name: '' }, 'name'],
        ['name is longer than 255 characters', { name: 'n'.repeat(256) }, 'name'],
        ['description is null', { description: null }, 'description'],
        ['default_features is null', { default_features: null }, 'default_features'],
        ['default_valid_days is null', { default_valid_days: null }, 'default_valid_days'],
        ['default_valid_days is a numeric string', { default_valid_days: '10' }, 'default_valid_days'],
        ['key_pair_id is not a UUID', { key_pair_id: 'nope' }, 'key_pair_id'],
        ['max_concurrent_activations is 0', { max_concurrent_activations: 0 }, 'max_concurrent_activations'],
        [
          'activation_heartbeat_interval is 0',
          { activation_heartbeat_interval: 0 },
          'activation_heartbeat_interval',
        ],
        [
          'activation_heartbeat_interval is 604801',
          { activation_heartbeat_interval: 604_801 },
          'activation_heartbeat_interval',
        ],
        ['an unknown field is sent', { nme: 'typo' }, 'nme'],
      ])(
        'rejects an update where %s with 400 naming the field, and changes nothing',
        async (_label, body, field) => {
          const product = await createProduct(org.api, {
            max_concurrent_activations: 2,
            activation_heartbeat_interval: 60,
          });
          expectProblem(
            await org.api.put(`/api/v1/products/${product.id}`, body),
            400,
            'validation_failed',
            field,
          );
          expect((await org.api.get(`/api/v1/products/${product.id}`)).body).toEqual(product);
        },
      );

      it('rejects malformed JSON on update with 400 validation_failed', async () => {
        const product = await createProduct(org.api);
        expectProblem(
          await org.api.put(`/api/v1/products/${product.id}`, '{"name": '),
          400,
          'validation_failed',
        );
      });

      it('accepts key_pair_id null (unassigning the key pair), and a new key pair afterwards', async () => {
        const { product, keyPair } = await productWithKeyPair(org.api);
        const cleared = await org.api.put(`/api/v1/products/${product.id}`, { key_pair_id: null });
        expect(cleared.status).toBe(200);
        expect(cleared.body).toMatchObject({ id: product.id, key_pair_id: null });
        expectProblem(
          await org.api.get(`/api/v1/products/${product.id}/public-key`),
          422,
          'key_pair_missing',
        );

        const replacement = await createKeyPair(org.api, { algorithm: 'ecdsa-p256' });
        const assigned = await org.api.put(`/api/v1/products/${product.id}`, { key_pair_id: replacement.id });
        expect(assigned.status).toBe(200);
        expect(assigned.body.key_pair_id).toBe(replacement.id);
        const publicKey = await org.api.get(`/api/v1/products/${product.id}/public-key`);
        expect(publicKey.status).toBe(200);
        expect(publicKey.body).toMatchObject({ key_pair_id: replacement.id, algorithm: 'ecdsa-p256' });
        expect(publicKey.body.key_pair_id).not.toBe(keyPair.id);
      });

      it("answers 404 to an update naming an unknown or another organization's key pair, and changes nothing", async () => {
        const { product } = await productWithKeyPair(org.api);
        const unknown = randomUUID();
        const missing = await org.api.put(`/api/v1/products/${product.id}`, {
          name: 'Changed',
          key_pair_id: unknown,
        });
        expectProblem(missing, 404, 'not_found');
        expect(missing.body.detail).toContain(unknown);

        const foreign = await createKeyPair(other.api);
        const theirs = await org.api.put(`/api/v1/products/${product.id}`, {
          name: 'Changed',
          key_pair_id: foreign.id,
        });
        expectProblem(theirs, 404, 'not_found');

        expect((await org.api.get(`/api/v1/products/${product.id}`)).body).toEqual(product);
        const publicKey = await org.api.get(`/api/v1/products/${product.id}/public-key`);
        expect(publicKey.body.key_pair_id).toBe(product.key_pair_id);
      });

      it('accepts max_concurrent_activations and activation_heartbeat_interval on create and update, within 1..604800 seconds', async () => {
        const product = await createProduct(org.api, {
          max_concurrent_activations: 5,
          activation_heartbeat_interval: 1,
        });
        expect(product).toMatchObject({ max_concurrent_activations: 5, activation_heartbeat_interval: 1 });

        const raised = await org.api.put(`/api/v1/products/${product.id}`, {
          max_concurrent_activations: 10,
          activation_heartbeat_interval: 604_800,
        });
        expect(raised.status).toBe(200);
        expect(raised.body).toMatchObject({
          max_concurrent_activations: 10,
          activation_heartbeat_interval: 604_800,
        });

        const cleared = await org.api.put(`/api/v1/products/${product.id}`, {
          max_concurrent_activations: null,
          activation_heartbeat_interval: null,
        });
        expect(cleared.status).toBe(200);
        expect(cleared.body).toMatchObject({
          max_concurrent_activations: null,
          activation_heartbeat_interval: null,
        });
        expect((await org.api.get(`/api/v1/products/${product.id}`)).body).toEqual(cleared.body);

        const upperBound = await createProduct(org.api, {
          activation_heartbeat_interval: 604_800,
          max_concurrent_activations: null,
        });
        expect(upperBound).toMatchObject({
          activation_heartbeat_interval: 604_800,
          max_concurrent_activations: null,
        });
        expectProblem(
          await org.api.put(`/api/v1/products/${product.id}`, { activation_heartbeat_interval: -5 }),
          400,
          'validation_failed',
          'activation_heartbeat_interval',
        );
      });
    });

    describe('delete', () => {
      it('deletes a product: 200 with a message, then GET answers 404 and the list no longer has it', async () => {
        const product = await createProduct(org.api);
        const deleted = await org.api.delete(`/api/v1/products/${product.id}`);
        expect(deleted.status).toBe(200);
        expect(deleted.body).toEqual({ message: expect.stringMatching(/deleted/i) });

        expectProblem(await org.api.get(`/api/v1/products/${product.id}`), 404, 'not_found');
        expectProblem(await org.api.put(`/api/v1/products/${product.id}`, { name: 'x' }), 404, 'not_found');
        expectProblem(await org.api.delete(`/api/v1/products/${product.id}`), 404, 'not_found');
        const list = await org.api.get('/api/v1/products?per_page=100');
        expect(list.body.products.map((p: { id: string }) => p.id)).not.toContain(product.id);
      });

      it('deletes a product that had a key pair, and licenses can no longer be issued for it', async () => {
        const { product } = await productWithKeyPair(org.api);
        expect((await org.api.delete(`/api/v1/products/${product.id}`)).status).toBe(200);
        expectProblem(await org.api.post('/api/v1/licenses', { product_id: product.id }), 404, 'not_found');
        expectProblem(await org.api.get(`/api/v1/products/${product.id}/public-key`), 404, 'not_found');
      });

      it('answers 404 not_found to deleting an unknown product', async () => {
        const response = await org.api.delete(`/api/v1/products/${randomUUID()}`);
        expectProblem(response, 404, 'not_found');
      });

      it('refuses with 409 conflict to delete a product that has a license, even once the license is revoked', async () => {
        const { product } = await productWithKeyPair(org.api);
        const license = await createLicense(org.api, { product_id: product.id });

        const refused = await org.api.delete(`/api/v1/products/${product.id}`);
        expectProblem(refused, 409, 'conflict');
        expect((await org.api.get(`/api/v1/products/${product.id}`)).status).toBe(200);

        expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
        const stillRefused = await org.api.delete(`/api/v1/products/${product.id}`);
        expectProblem(stillRefused, 409, 'conflict');
        expect((await org.api.get(`/api/v1/products/${product.id}`)).body).toEqual(product);
        // and the refused delete did not break license issuing
        await createLicense(org.api, { product_id: product.id });
      });

      it('never leaves a license for a deleted product when license creates race a product delete', async () => {
        // The delete gets a different head start each round (counted in event-loop turns, not time), so
        // that across rounds it loses to the creates in some and beats them in others; each round must
        // end consistently either way.
        for (const headStart of [0, 0, 10, 50, 200, 1000]) {
          const { product } = await productWithKeyPair(org.api);
          const deleting = org.api.delete(`/api/v1/products/${product.id}`);
          for (let turn = 0; turn < headStart; turn++) await new Promise((resolve) => setImmediate(resolve));
          const creating = Array.from({ length: 20 }, () =>
            org.api.post('/api/v1/licenses', { product_id: product.id }),
          );
          const [deleted, ...creates] = await Promise.all([deleting, ...creating]);

          for (const create of creates) {
            expect([201, 404]).toContain(create.status);
            if (create.status === 404) expectProblem(create, 404, 'not_found');
            else expect(create.body.product_id).toBe(product.id);
          }
          const issued = creates.filter((create) => create.status === 201).map((create) => create.body.id);
          const licenses = await org.api.get(`/api/v1/licenses?product_id=${product.id}&per_page=100`);
          expect(licenses.status).toBe(200);

          expect([200, 409]).toContain(deleted.status);
          if (deleted.status === 200) {
            expect(issued).toEqual([]);
            expect(licenses.body).toEqual({ licenses: [], total: 0 });
            expectProblem(await org.api.get(`/api/v1/products/${product.id}`), 404, 'not_found');
            expectProblem(
              await org.api.post('/api/v1/licenses', { product_id: product.id }),
              404,
              'not_found',
            );
          } else {
            expectProblem(deleted, 409, 'conflict');
            expect((await org.api.get(`/api/v1/products/${product.id}`)).status).toBe(200);
            // the product was never retired, so no create was turned away
            expect(issued).toHaveLength(creates.length);
            expect(licenses.body.total).toBe(issued.length);
            expect(licenses.body.licenses.map((l: { id: string }) => l.id).sort()).toEqual(
              [...issued].sort(),
            );
          }
        }
      });
    });

    it('serves the same products under /v1/products as under /api/v1/products', async () => {
      const viaAlias = await org.api.post('/v1/products', { name: 'Alias', code: uniqueCode('alias') });
      expect(viaAlias.status).toBe(201);
      const viaApi = await org.api.get(`/api/v1/products/${viaAlias.body.id}`);
      expect(viaApi.status).toBe(200);
      expect(viaApi.body).toEqual(viaAlias.body);
      expect((await org.api.get(`/v1/products/${viaAlias.body.id}`)).body).toEqual(viaAlias.body);

      const listApi = await org.api.get('/api/v1/products?per_page=100');
      const listAlias = await org.api.get('/v1/products?per_page=100');
      expect(listAlias.status).toBe(200);
      expect(listAlias.body).toEqual(listApi.body);

      const updated = await org.api.put(`/v1/products/${viaAlias.body.id}`, { name: 'Alias renamed' });
      expect(updated.status).toBe(200);
      expect((await org.api.get(`/api/v1/products/${viaAlias.body.id}`)).body.name).toBe('Alias renamed');
      expect((await org.api.delete(`/v1/products/${viaAlias.body.id}`)).status).toBe(200);
      expectProblem(await org.api.get(`/api/v1/products/${viaAlias.body.id}`), 404, 'not_found');
    });
  });

  describe('product public key', () => {
    it.each(['ed25519', 'ecdsa-p256', 'rsa-3072'])(
      'returns the public key of a product signed with %s: the PEM SPKI of its key pair, with algorithm and key_pair_id',
      async (algorithm) => {
        const { product, keyPair } = await productWithKeyPair(org.api, {}, algorithm);
        const response = await org.api.get(`/api/v1/products/${product.id}/public-key`);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          product_id: product.id,
          product_name: product.name,
          product_code: product.code,
          public_key: keyPair.public_key,
          algorithm,
          key_pair_id: keyPair.id,
        });
        expect(response.body.public_key).toMatch(
          /^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n?$/,
        );
        expect(createPublicKey(response.body.public_key).type).toBe('public');
        expect(response.text).not.toContain('PRIVATE');
        expect((await org.api.get(`/v1/products/${product.id}/public-key`)).body).toEqual(response.body);
      },
    );

    it('follows a rename of the product', async () => {
      const { product } = await productWithKeyPair(org.api);
      await org.api.put(`/api/v1/products/${product.id}`, { name: 'Renamed Editor' });
      const response = await org.api.get(`/api/v1/products/${product.id}/public-key`);
      expect(response.body).toMatchObject({ product_name: 'Renamed Editor', product_code: product.code });
    });

    it('answers 422 key_pair_missing for a product without a key pair, and so does POST /licenses for it', async () => {
      const product = await createProduct(org.api);
      const publicKey = await org.api.get(`/api/v1/products/${product.id}/public-key`);
      expectProblem(publicKey, 422, 'key_pair_missing');
      const license = await org.api.post('/api/v1/licenses', { product_id: product.id });
      expectProblem(license, 422, 'key_pair_missing');
      const licenses = await org.api.get(`/api/v1/licenses?product_id=${product.id}`);
      expect(licenses.body).toEqual({ licenses: [], total: 0 });
    });

    it("answers 404 for another organization's product, and for an unknown product", async () => {
      const { product } = await productWithKeyPair(other.api);
      expectProblem(await org.api.get(`/api/v1/products/${product.id}/public-key`), 404, 'not_found');
      expectProblem(await org.api.get(`/api/v1/products/${randomUUID()}/public-key`), 404, 'not_found');
      expect((await other.api.get(`/api/v1/products/${product.id}/public-key`)).status).toBe(200);
    });
  });

  describe('key pairs', () => {
    it.each<[string, string | undefined]>([
      ['no algorithm given: ed25519', undefined],
      ['ed25519', 'ed25519'],
      ['ecdsa-p256', 'ecdsa-p256'],
      ['rsa-3072', 'rsa-3072'],
    ])(
      'creates a key pair (%s): 201 with its public half and a SHA-256 fingerprint of the DER SPKI',
      async (_label, algorithm) => {
        const expected = algorithm ?? 'ed25519';
        const created = await org.api.post(
          '/api/v1/key-pairs',
          algorithm ? { name: 'Signing', algorithm } : {},
        );
        expect(created.status).toBe(201);
        expect(Object.keys(created.body).sort()).toEqual(KEY_PAIR_FIELDS);
        expect(created.body).toEqual({
          id: expect.stringMatching(UUID),
          name: algorithm ? 'Signing' : expect.any(String),
          algorithm: expected,
          public_key: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----\n/),
          fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
          created_at: expect.stringMatching(ISO_MS_UTC),
        });
        expect(created.body.name.length).toBeGreaterThan(0);

        const key = createPublicKey(created.body.public_key);
        expect(key.type).toBe('public');
        const der = key.export({ type: 'spki', format: 'der' });
        expect(created.body.fingerprint).toBe(createHash('sha256').update(der).digest('hex'));
        if (expected === 'ed25519') expect(key.asymmetricKeyType).toBe('ed25519');
        if (expected === 'ecdsa-p256') {
          expect(key.asymmetricKeyType).toBe('ec');
          expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
        }
        if (expected === 'rsa-3072') {
          expect(key.asymmetricKeyType).toBe('rsa');
          expect(key.asymmetricKeyDetails?.modulusLength).toBe(3072);
        }

        const fetched = await org.api.get(`/api/v1/key-pairs/${created.body.id}`);
        expect(fetched.status).toBe(200);
        expect(fetched.body).toEqual(created.body);
        const listed = await org.api.get('/api/v1/key-pairs?per_page=100');
        for (const text of [created.text, fetched.text, listed.text]) {
          expect(text).not.toMatch(/PRIVATE/i);
          expect(text).not.toMatch(/private_key|ciphertext/i);
        }
      },
    );

    it('gives each key pair its own key and fingerprint', async () => {
      const first = await createKeyPair(org.api);
      const second = await createKeyPair(org.api);
      expect(second.id).not.toBe(first.id);
      expect(second.public_key).not.toBe(first.public_key);
      expect(second.fingerprint).not.toBe(first.fingerprint);
    });

    it.each<[string, unknown, string | undefined]>([
      ['an unknown algorithm', { algorithm: 'rsa-1024' }, 'algorithm'],
      ['an algorithm in capitals', { algorithm: 'ED25519' }, 'algorithm'],
      ['a null algorithm', { algorithm: null }, 'algorithm'],
      ['an unknown field', { name: 'k', private_key: 'mine' }, 'private_key'],
      ['an empty name', { name: '' }, 'name'],
      ['a name longer than 255 characters', { name: 'k'.repeat(256) }, 'name'],
      ['a name that is not a string', { name: 5 }, 'name'],
      ['malformed JSON', '{"algorithm": ', undefined],
    ])('rejects a key pair with %s with 400 validation_failed', async (_label, body, field) => {
      const before = (await org.api.get('/api/v1/key-pairs?per_page=1')).body.total;
      expectProblem(await org.api.post('/api/v1/key-pairs', body), 400, 'validation_failed', field);
      expect((await org.api.get('/api/v1/key-pairs?per_page=1')).body.total).toBe(before);
    });

    describe('list and get', () => {
      let keeper: TestOrganization;
      let created: any[];

      beforeAll(async () => {
        keeper = await stack.newOrganization();
        created = [];
        for (const algorithm of ['ed25519', 'ecdsa-p256', 'ed25519'])
          created.push(await createKeyPair(keeper.api, { algorithm }));
      });

      it('lists key pairs newest first with a total, paginated', async () => {
        const list = await keeper.api.get('/api/v1/key-pairs');
        expect(list.status).toBe(200);
        expect(list.body).toEqual({ key_pairs: newestFirst(created), total: 3 });
        expect(list.body.key_pairs[0].id).toBe(created[2].id);

        const first = await keeper.api.get('/api/v1/key-pairs?page=1&per_page=2');
        const second = await keeper.api.get('/api/v1/key-pairs?page=2&per_page=2');
        const past = await keeper.api.get('/api/v1/key-pairs?page=3&per_page=2');
        expect([first.status, second.status, past.status]).toEqual([200, 200, 200]);
        expect([...first.body.key_pairs, ...second.body.key_pairs]).toEqual(newestFirst(created));
        expect([first.body.total, second.body.total, past.body.total]).toEqual([3, 3, 3]);
        expect(past.body.key_pairs).toEqual([]);
        expect((await keeper.api.get('/v1/key-pairs')).body).toEqual(list.body);
      });

      it.each(['per_page=0', 'per_page=101', 'page=0', 'page=abc'])('rejects ?%s with 400', async (query) => {
        expectProblem(
          await keeper.api.get(`/api/v1/key-pairs?${query}`),
          400,
          'validation_failed',
          query.split('=')[0],
        );
      });

      it("keeps key pairs to their organization: another organization's are absent from the list and 404 to get and delete", async () => {
        const theirs = await other.api.get('/api/v1/key-pairs?per_page=100');
        const theirIds = theirs.body.key_pairs.map((keyPair: { id: string }) => keyPair.id);
        for (const keyPair of created) {
          expect(theirIds).not.toContain(keyPair.id);
          expectProblem(await other.api.get(`/api/v1/key-pairs/${keyPair.id}`), 404, 'not_found');
          expectProblem(await other.api.delete(`/api/v1/key-pairs/${keyPair.id}`), 404, 'not_found');
        }
        // the refused deletes removed nothing
        expect((await keeper.api.get('/api/v1/key-pairs')).body.total).toBe(3);
        expectProblem(await keeper.api.get(`/api/v1/key-pairs/${randomUUID()}`), 404, 'not_found');
        expectProblem(await keeper.api.get('/api/v1/key-pairs/not-a-uuid'), 400, 'validation_failed', 'id');
        expectProblem(
          await keeper.api.delete('/api/v1/key-pairs/not-a-uuid'),
          400,
          'validation_failed',
          'id',
        );
      });
    });

    it('deletes a key pair only once no product uses it and every license it signed is revoked', async () => {
      const { product, keyPair } = await productWithKeyPair(org.api);
      const inUse = await org.api.delete(`/api/v1/key-pairs/${keyPair.id}`);
      expectProblem(inUse, 409, 'conflict');

      const license = await createLicense(org.api, { product_id: product.id });
      const replacement = await createKeyPair(org.api);
      const moved = await org.api.put(`/api/v1/products/${product.id}`, { key_pair_id: replacement.id });
      expect(moved.status).toBe(200);

      const signedLive = await org.api.delete(`/api/v1/key-pairs/${keyPair.id}`);
      expectProblem(signedLive, 409, 'conflict');
      expect((await org.api.get(`/api/v1/key-pairs/${keyPair.id}`)).status).toBe(200);

      expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
      const deleted = await org.api.delete(`/api/v1/key-pairs/${keyPair.id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ message: expect.stringMatching(/deleted/i) });

      expectProblem(await org.api.get(`/api/v1/key-pairs/${keyPair.id}`), 404, 'not_found');
      expectProblem(await org.api.delete(`/api/v1/key-pairs/${keyPair.id}`), 404, 'not_found');
      const list = await org.api.get('/api/v1/key-pairs?per_page=100');
      expect(list.body.key_pairs.map((k: { id: string }) => k.id)).not.toContain(keyPair.id);

      // the replacement is still in use by the product
      expectProblem(await org.api.delete(`/api/v1/key-pairs/${replacement.id}`), 409, 'conflict');
      // and the product still issues licenses with it
      const next = await createLicense(org.api, { product_id: product.id });
      const verified = await org.api.post('/api/v1/licenses/verify', {
        license_blob: next.license_blob,
        product_id: product.id,
      });
      expect(verified.body).toMatchObject({ valid: true, errors: [] });
    });

    it('deletes an unused key pair, and answers 404 to deleting an unknown one', async () => {
      const keyPair = await createKeyPair(org.api);
      const deleted = await org.api.delete(`/v1/key-pairs/${keyPair.id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body.message).toMatch(/deleted/i);
      expectProblem(await org.api.get(`/api/v1/key-pairs/${keyPair.id}`), 404, 'not_found');
      expectProblem(await org.api.delete(`/api/v1/key-pairs/${randomUUID()}`), 404, 'not_found');
    });

    it('frees a key pair when the product using it is deleted', async () => {
      const { product, keyPair } = await productWithKeyPair(org.api);
      expect((await org.api.delete(`/api/v1/products/${product.id}`)).status).toBe(200);
      expect((await org.api.delete(`/api/v1/key-pairs/${keyPair.id}`)).status).toBe(200);
    });

    it("keeps licenses signed by a product's old key pair verifiable (kid lookup) after the product moves to a new one", async () => {
      const { product, keyPair: oldKey } = await productWithKeyPair(org.api, {}, 'ecdsa-p256');
      const oldLicense = await createLicense(org.api, { product_id: product.id });

      const newKey = await createKeyPair(org.api, { algorithm: 'ed25519' });
      expect((await org.api.put(`/api/v1/products/${product.id}`, { key_pair_id: newKey.id })).status).toBe(
        200,
      );
      const publicKey = await org.api.get(`/api/v1/products/${product.id}/public-key`);
      expect(publicKey.body).toMatchObject({
        key_pair_id: newKey.id,
        public_key: newKey.public_key,
        algorithm: 'ed25519',
      });

      const newLicense = await createLicense(org.api, { product_id: product.id });
      for (const license of [oldLicense, newLicense]) {
        const verified = await org.api.post('/api/v1/licenses/verify', {
          license_blob: license.license_blob,
          product_id: product.id,
        });
        expect(verified.status).toBe(200);
        expect(verified.body).toMatchObject({
          valid: true,
          errors: [],
          license: { serial: license.serial, product_id: product.id },
        });
      }
      // the old license is signed with the old key, so the old public key (not the new) verifies it offline-style
      const withOldKey = await org.api.post('/api/v1/licenses/verify', {
        license_blob: oldLicense.license_blob,
        public_key: oldKey.public_key,
      });
      expect(withOldKey.body).toMatchObject({ valid: true, errors: [] });
      const withNewKey = await org.api.post('/api/v1/licenses/verify', {
        license_blob: oldLicense.license_blob,
        public_key: newKey.public_key,
      });
      expect(withNewKey.body.valid).toBe(false);
      expect(withNewKey.body.errors.map((e: { code: string }) => e.code)).toEqual(['signature_invalid']);

      // another organization cannot use this organization's key pair through kid lookup
      const { product: theirProduct } = await productWithKeyPair(other.api);
      const foreign = await other.api.post('/api/v1/licenses/verify', {
        license_blob: oldLicense.license_blob,
        product_id: theirProduct.id,
      });
      expect(foreign.status).toBe(200);
      expect(foreign.body.valid).toBe(false);
      expect(foreign.body.errors.map((e: { code: string }) => e.code)).toEqual([
        'unknown_key',
        'product_mismatch',
      ]);
    });
  });
});
