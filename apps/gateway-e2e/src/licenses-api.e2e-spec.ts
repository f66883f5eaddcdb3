import { randomUUID } from 'node:crypto';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { createLicense, decodeBlob, expireLicenseInDatabase, productWithKeyPair } from './support/fixtures';

const DAY_MS = 86_400_000;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SERIAL = /^LIC-[A-Z0-9-]+-[0-9A-HJKMNP-TV-Z]{16}$/;

describe('licenses API through the gateway', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    stack = await startStack();
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
  });
  afterAll(() => stack.close());

  const expectProblem = (
    response: { status: number; headers: Headers; body: any },
    status: number,
    code: string,
  ) => {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({ type: 'about:blank', status, code });
    expect(typeof response.body.detail).toBe('string');
  };

  describe('create', () => {
    it('applies the defaults: subscription, product features and validity, one seat, null customer and binding', async () => {
      const { product, keyPair } = await productWithKeyPair(org.api, {
        default_features: ['pro', 'export'],
        default_valid_days: 30,
      });
      const created = await org.api.post('/api/v1/licenses', { product_id: product.id });
      expect(created.status).toBe(201);
      const license = created.body;
      expect(license).toMatchObject({
        product_id: product.id,
        product_name: product.name,
        product_code: product.code,
        license_type: 'subscription',
        status: 'active',
        features: ['pro', 'export'],
        max_seats: 1,
        customer_id: null,
        customer_email: null,
        hardware_binding: null,
        revoked_at: null,
      });
      expect(license.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(license.serial).toMatch(SERIAL);
      expect(license.valid_from).toMatch(ISO_MS);
      expect(license.valid_until).toMatch(ISO_MS);
      expect(license.created_at).toMatch(ISO_MS);
      expect(Date.parse(license.valid_until) - Date.parse(license.valid_from)).toBe(30 * DAY_MS);
      expect(typeof license.license_blob).toBe('string');
      expect(license.license_blob.length).toBeGreaterThan(0);

      const { header, claims } = decodeBlob(license.license_blob);
      expect(header).toEqual({ alg: 'EdDSA', typ: 'license+jwt', kid: keyPair.id });
      expect(claims).toMatchObject({
        v: 1,
        jti: license.id,
        sub: license.serial,
        iss: org.id,
        product_id: product.id,
        product_code: product.code,
        license_type: 'subscription',
        customer_id: null,
        customer_email: null,
        features: ['pro', 'export'],
        max_seats: 1,
        hardware_binding: null,
        valid_from: license.valid_from,
        valid_until: license.valid_until,
        nbf: Math.floor(Date.parse(license.valid_from) / 1000),
        exp: Math.floor(Date.parse(license.valid_until) / 1000),
      });
      expect(claims.exp - claims.nbf).toBe(30 * 86_400);

      const fetched = await org.api.get(`/api/v1/licenses/${license.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(license);

      const listed = await org.api.get(`/api/v1/licenses?product_id=${product.id}`);
      expect(listed.status).toBe(200);
      expect(listed.body.total).toBe(1);
      expect(listed.body.licenses).toHaveLength(1);
      expect(listed.body.licenses[0]).not.toHaveProperty('license_blob');
      const { license_blob: _blob, ...withoutBlob } = license;
      expect(listed.body.licenses[0]).toEqual(withoutBlob);
    });

    it('valid_days 0 issues a perpetual license: valid_until null and no exp claim', async () => {
      const { product } = await productWithKeyPair(org.api, { default_valid_days: 90 });
      const license = await createLicense(org.api, { product_id: product.id, valid_days: 0 });
      expect(license.valid_until).toBeNull();
      expect(license.license_type).toBe('subscription');
      const { claims } = decodeBlob(license.license_blob);
      expect(claims.valid_until).toBeNull();
      expect(claims).not.toHaveProperty('exp');
    });

    it('license_type perpetual forces valid_until null even when valid_days is given', async () => {
      const { product } = await productWithKeyPair(org.api);
      const license = await createLicense(org.api, {
        product_id: product.id,
        license_type: 'perpetual',
        valid_days: 30,
      });
      expect(license).toMatchObject({ license_type: 'perpetual', valid_until: null });
      const { claims } = decodeBlob(license.license_blob);
      expect(claims).toMatchObject({ license_type: 'perpetual', valid_until: null });
      expect(claims).not.toHaveProperty('exp');
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.valid_until).toBeNull();
    });

    it('features given, even an empty list, replace the product default features', async () => {
      const { product } = await productWithKeyPair(org.api, { default_features: ['pro'] });
      expect((await createLicense(org.api, { product_id: product.id, features: [] })).features).toEqual([]);
      const custom = await createLicense(org.api, { product_id: product.id, features: ['export', 'cloud'] });
      expect(custom.features).toEqual(['export', 'cloud']);
      expect(decodeBlob(custom.license_blob).claims.features).toEqual(['export', 'cloud']);
    });

    it('valid_days overrides the product default', async () => {
      const { product } = await productWithKeyPair(org.api, { default_valid_days: 365 });
      const license = await createLicense(org.api, { product_id: product.id, valid_days: 7 });
      expect(Date.parse(license.valid_until) - Date.parse(license.valid_from)).toBe(7 * DAY_MS);
    });

    it('rejects a node_locked license with max_seats 2 (400) and gives a node_locked license one seat by default', async () => {
      const { product } = await productWithKeyPair(org.api);
      const refused = await org.api.post('/api/v1/licenses', {
        product_id: product.id,
        license_type: 'node_locked',
        max_seats: 2,
      });
      expectProblem(refused, 400, 'validation_failed');
      expect(refused.body.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'max_seats' })]),
      );
      expect((await org.api.get(`/api/v1/licenses?product_id=${product.id}`)).body.total).toBe(0);

      const nodeLocked = await createLicense(org.api, {
        product_id: product.id,
        license_type: 'node_locked',
      });
      expect(nodeLocked).toMatchObject({ license_type: 'node_locked', max_seats: 1 });
    });

    it('stores hardware_binding {fingerprint}, returns it on create, get and list, and signs it into the claims', async () => {
      const { product } = await productWithKeyPair(org.api);
      const binding = { fingerprint: 'a3f1c2d4e5-machine-0001' };
      const license = await createLicense(org.api, {
        product_id: product.id,
        license_type: 'node_locked',
        hardware_binding: binding,
        customer_id: 'cus_123',
        customer_email: 'grace@example.com',
      });
      expect(license).toMatchObject({
        hardware_binding: binding,
        customer_id: 'cus_123',
        customer_email: 'grace@example.com',
      });
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.hardware_binding).toEqual(binding);
      const listed = await org.api.get(`/api/v1/licenses?product_id=${product.id}`);
      expect(listed.body.licenses[0].hardware_binding).toEqual(binding);

      const { claims } = decodeBlob(license.license_blob);
      expect(claims.hardware_binding).toEqual(binding);
      expect(claims).toMatchObject({
        customer_id: 'cus_123',
        customer_email: 'grace@example.com',
        license_type: 'node_locked',
      });
    });

    it('accepts hardware_binding null as unbound', async () => {
      const { product } = await productWithKeyPair(org.api);
      const license = await createLicense(org.api, { product_id: product.id, hardware_binding: null });
      expect(license.hardware_binding).toBeNull();
    });

    it.each([
      [
        'hardware_binding with an unknown field',
        { hardware_binding: { fingerprint: 'abc', serial_number: 'x' } },
        /^hardware_binding/,
      ],
      ['hardware_binding without a fingerprint', { hardware_binding: {} }, /^hardware_binding/],
      ['an invalid customer_email', { customer_email: 'not-an-email' }, /^customer_email$/],
      ['features that is not an array', { features: 'pro' }, /^features$/],
      ['features holding a non-string', { features: ['pro', 7] }, /^features$/],
      ['valid_days -1', { valid_days: -1 }, /^valid_days$/],
      ['valid_days that is not an integer', { valid_days: 1.5 }, /^valid_days$/],
      ['max_seats 0', { max_seats: 0 }, /^max_seats$/],
      ['an unknown license_type', { license_type: 'forever' }, /^license_type$/],
      ['an unknown body field', { colour: 'blue' }, /^colour$/],
    ])('rejects %s with 400 validation_failed and creates nothing', async (_what, extra, field) => {
      const { product } = await productWithKeyPair(org.api);
      const response = await org.api.post('/api/v1/licenses', { product_id: product.id, ...extra });
      expectProblem(response, 400, 'validation_failed');
      expect(response.body.errors.length).toBeGreaterThan(0);
      expect(response.body.errors.some((e: { field: string }) => field.test(e.field))).toBe(true);
      expect((await org.api.get(`/api/v1/licenses?product_id=${product.id}`)).body.total).toBe(0);
    });

    it('rejects a missing or malformed product_id with 400', async () => {
      const missing = await org.api.post('/api/v1/licenses', {});
      expectProblem(missing, 400, 'validation_failed');
      expect(missing.body.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'product_id' })]),
      );
      expectProblem(
        await org.api.post('/api/v1/licenses', { product_id: 'not-a-uuid' }),
        400,
        'validation_failed',
      );
    });

    it('answers 404 not_found naming the product when product_id is unknown', async () => {
      const productId = randomUUID();
      const response = await org.api.post('/api/v1/licenses', { product_id: productId });
      expectProblem(response, 404, 'not_found');
      expect(response.body.detail).toContain(productId);
      expect(response.body.detail).toMatch(/product/i);
      expect(response.body).not.toHaveProperty('errors');
    });

    it("answers 404 for another organization's product, exactly as for an unknown one", async () => {
      const { product } = await productWithKeyPair(other.api);
      const response = await org.api.post('/api/v1/licenses', { product_id: product.id });
      expectProblem(response, 404, 'not_found');
      expect(response.body.detail).toContain(product.id);
      expect((await other.api.get(`/api/v1/licenses?product_id=${product.id}`)).body.total).toBe(0);
    });

    it('answers 422 key_pair_missing for a product without a key pair', async () => {
      const product = await org.api.post('/api/v1/products', {
        name: 'Unsigned',
        code: `unsigned-${randomUUID().slice(0, 8)}`,
      });
      expect(product.status).toBe(201);
      expectProblem(
        await org.api.post('/api/v1/licenses', { product_id: product.body.id }),
        422,
        'key_pair_missing',
      );
    });

    it('gives unique serials to 50 licenses created concurrently', async () => {
      const { product } = await productWithKeyPair(org.api);
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          org.api.post('/api/v1/licenses', { product_id: product.id, customer_id: `c${i}` }),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(50).fill(201));
      const serials = responses.map((r) => r.body.serial as string);
      const ids = responses.map((r) => r.body.id as string);
      expect(new Set(serials).size).toBe(50);
      expect(new Set(ids).size).toBe(50);
      for (const serial of serials)
        expect(serial.startsWith(`LIC-${product.code.toUpperCase()}-`)).toBe(true);
      const listed = await org.api.get(`/api/v1/licenses?product_id=${product.id}&per_page=100`);
      expect(listed.body.total).toBe(50);
      expect(new Set(listed.body.licenses.map((l: { serial: string }) => l.serial))).toEqual(
        new Set(serials),
      );
    });
  });

  describe('list', () => {
    it('filters by product_id and counts only the matches in total', async () => {
      const tenant = await stack.newOrganization();
      const { product: a } = await productWithKeyPair(tenant.api);
      const { product: b } = await productWithKeyPair(tenant.api);
      const ofA = [
        await createLicense(tenant.api, { product_id: a.id }),
        await createLicense(tenant.api, { product_id: a.id }),
      ];
      await createLicense(tenant.api, { product_id: b.id });

      const filtered = await tenant.api.get(`/api/v1/licenses?product_id=${a.id}`);
      expect(filtered.status).toBe(200);
      expect(filtered.body.total).toBe(2);
      expect(filtered.body.licenses.map((l: { id: string }) => l.id).sort()).toEqual(
        ofA.map((l) => l.id).sort(),
      );
      expect((await tenant.api.get('/api/v1/licenses')).body.total).toBe(3);
    });

    it('filters by effective status: a license past valid_until is expired, not active, and GET says expired', async () => {
      const tenant = await stack.newOrganization();
      const { product } = await productWithKeyPair(tenant.api);
      const active = await createLicense(tenant.api, { product_id: product.id });
      const revoked = await createLicense(tenant.api, { product_id: product.id });
      const expired = await createLicense(tenant.api, { product_id: product.id });
      expect((await tenant.api.delete(`/api/v1/licenses/${revoked.id}`)).status).toBe(200);
      await expireLicenseInDatabase(expired.id);

      const ids = async (status: string) => {
        const response = await tenant.api.get(`/api/v1/licenses?status=${status}`);
        expect(response.status).toBe(200);
        expect(response.body.total).toBe(response.body.licenses.length);
        return response.body.licenses.map((l: { id: string; status: string }) => {
          expect(l.status).toBe(status);
          return l.id;
        });
      };
      expect(await ids('active')).toEqual([active.id]);
      expect(await ids('revoked')).toEqual([revoked.id]);
      expect(await ids('expired')).toEqual([expired.id]);
      expect(await ids('suspended')).toEqual([]);

      const fetched = await tenant.api.get(`/api/v1/licenses/${expired.id}`);
      expect(fetched.body.status).toBe('expired');
      expect(Date.parse(fetched.body.valid_until)).toBeLessThan(Date.now());
      const all = await tenant.api.get('/api/v1/licenses');
      expect(all.body.total).toBe(3);
      expect(all.body.licenses.find((l: { id: string }) => l.id === expired.id).status).toBe('expired');
    });

    it('filters customer_email as a case-insensitive substring in which % and _ are literal', async () => {
      const tenant = await stack.newOrganization();
      const { product } = await productWithKeyPair(tenant.api);
      const emails = [
        'Ada.Lovelace@Example.com',
        'ada_l@example.com',
        'adaXl@example.com',
        'pct%off@example.com',
        'bob@other.org',
      ];
      const byEmail = new Map<string, string>();
      for (const email of emails)
        byEmail.set(
          email,
          (await createLicense(tenant.api, { product_id: product.id, customer_email: email })).id,
        );
      await createLicense(tenant.api, { product_id: product.id });

      const matching = async (filter: string) => {
        const response = await tenant.api.get(
          `/api/v1/licenses?customer_email=${encodeURIComponent(filter)}`,
        );
        expect(response.status).toBe(200);
        expect(response.body.total).toBe(response.body.licenses.length);
        return response.body.licenses.map((l: { customer_email: string }) => l.customer_email).sort();
      };
      expect(await matching('ADA')).toEqual(
        ['Ada.Lovelace@Example.com', 'adaXl@example.com', 'ada_l@example.com'].sort(),
      );
      expect(await matching('example.COM')).toEqual(emails.filter((e) => /example\.com$/i.test(e)).sort());
      expect(await matching('_')).toEqual(['ada_l@example.com']);
      expect(await matching('a_l')).toEqual(['ada_l@example.com']);
      expect(await matching('%')).toEqual(['pct%off@example.com']);
      expect(await matching('%off')).toEqual(['pct%off@example.com']);
      expect(await matching('a%l')).toEqual([]);
      expect(await matching('nobody')).toEqual([]);
    });

    it('filters by the whole serial, whatever its case, and never by a part of it', async () => {
      const tenant = await stack.newOrganization();
      const { product } = await productWithKeyPair(tenant.api);
      const [wanted] = await Promise.all([
        createLicense(tenant.api, { product_id: product.id }),
        createLicense(tenant.api, { product_id: product.id }),
      ]);
      const serials = async (filter: string) => {
        const response = await tenant.api.get(`/api/v1/licenses?serial=${encodeURIComponent(filter)}`);
        expect(response.status).toBe(200);
        return response.body.licenses.map((l: { id: string }) => l.id);
      };
      expect(await serials(wanted.serial)).toEqual([wanted.id]);
      expect(await serials(wanted.serial.toLowerCase())).toEqual([wanted.id]);
      expect(await serials(wanted.serial.slice(0, -1))).toEqual([]);
      // Another organization's serial finds nothing.
      expect((await other.api.get(`/api/v1/licenses?serial=${wanted.serial}`)).body.total).toBe(0);
    });

    it('paginates newest first with a total over all matches, and a page past the end is an empty 200', async () => {
      const tenant = await stack.newOrganization();
      const { product } = await productWithKeyPair(tenant.api);
      const created = [];
      for (let i = 0; i < 5; i++)
        created.push(await createLicense(tenant.api, { product_id: product.id, customer_id: `c${i}` }));
      const newestFirst = [...created]
        .sort(
          (x, y) =>
            Date.parse(y.created_at) - Date.parse(x.created_at) || (y.id < x.id ? -1 : y.id > x.id ? 1 : 0),
        )
        .map((l) => l.id);

      const page = async (query: string) => {
        const response = await tenant.api.get(`/api/v1/licenses?${query}`);
        expect(response.status).toBe(200);
        return response.body as { licenses: { id: string }[]; total: number };
      };
      const all = await page('');
      expect(all.total).toBe(5);
      expect(all.licenses.map((l) => l.id)).toEqual(newestFirst);

      const pages = [
        await page('page=1&per_page=2'),
        await page('page=2&per_page=2'),
        await page('page=3&per_page=2'),
      ];
      expect(pages.map((p) => p.total)).toEqual([5, 5, 5]);
      expect(pages.map((p) => p.licenses.length)).toEqual([2, 2, 1]);
      expect(pages.flatMap((p) => p.licenses.map((l) => l.id))).toEqual(newestFirst);

      const pastTheEnd = await page('page=4&per_page=2');
      expect(pastTheEnd).toEqual({ licenses: [], total: 5 });
      expect((await page('page=1&per_page=100')).licenses).toHaveLength(5);
    });

    it.each([
      ['per_page 101', 'per_page=101'],
      ['per_page 0', 'per_page=0'],
      ['page 0', 'page=0'],
      ['page -1', 'page=-1'],
      ['a non-numeric page', 'page=abc'],
      ['a fractional per_page', 'per_page=2.5'],
      ['a malformed product_id', 'product_id=not-a-uuid'],
      ['an unknown status', 'status=deleted'],
      ['an unknown query parameter', 'colour=blue'],
    ])('rejects %s with 400 validation_failed', async (_what, query) => {
      const response = await org.api.get(`/api/v1/licenses?${query}`);
      expectProblem(response, 400, 'validation_failed');
    });

    it("answers an empty 200 for a product_id filter naming another organization's product or an unknown one", async () => {
      const { product: foreign } = await productWithKeyPair(other.api);
      await createLicense(other.api, { product_id: foreign.id });
      for (const productId of [foreign.id, randomUUID()]) {
        const response = await org.api.get(`/api/v1/licenses?product_id=${productId}`);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ licenses: [], total: 0 });
      }
    });

    it("never lists another organization's licenses", async () => {
      const { product: foreign } = await productWithKeyPair(other.api);
      const theirs = await createLicense(other.api, {
        product_id: foreign.id,
        customer_email: 'secret@foreign.example',
      });
      const mine = await org.api.get('/api/v1/licenses?per_page=100&customer_email=foreign.example');
      expect(mine.body).toEqual({ licenses: [], total: 0 });
      const everything = await org.api.get('/api/v1/licenses?per_page=100');
      expect(everything.body.licenses.map((l: { id: string }) => l.id)).not.toContain(theirs.id);
    });
  });

  describe('get, download and revoke', () => {
    it("answers 404 for another organization's license on get, download and revoke, and leaves it untouched", async () => {
      const { product } = await productWithKeyPair(other.api);
      const theirs = await createLicense(other.api, { product_id: product.id });
      expectProblem(await org.api.get(`/api/v1/licenses/${theirs.id}`), 404, 'not_found');
      expectProblem(await org.api.get(`/api/v1/licenses/${theirs.id}/download`), 404, 'not_found');
      expectProblem(await org.api.delete(`/api/v1/licenses/${theirs.id}`), 404, 'not_found');
      const still = await other.api.get(`/api/v1/licenses/${theirs.id}`);
      expect(still.body).toMatchObject({ status: 'active', revoked_at: null });
    });

    it('answers 404 not_found naming the license for an unknown id', async () => {
      const id = randomUUID();
      for (const response of [
        await org.api.get(`/api/v1/licenses/${id}`),
        await org.api.get(`/api/v1/licenses/${id}/download`),
        await org.api.delete(`/api/v1/licenses/${id}`),
      ]) {
        expectProblem(response, 404, 'not_found');
        expect(response.body.detail).toContain(id);
      }
    });

    it('answers 400 validation_failed for a malformed id', async () => {
      for (const response of [
        await org.api.get('/api/v1/licenses/not-a-uuid'),
        await org.api.get('/api/v1/licenses/not-a-uuid/download'),
        await org.api.delete('/api/v1/licenses/not-a-uuid'),
      ]) {
        expectProblem(response, 400, 'validation_failed');
        expect(response.body.errors).toEqual([expect.objectContaining({ field: 'id' })]);
      }
    });

    it('serves list, get, download and verify under the /v1 alias with the same data', async () => {
      const { product } = await productWithKeyPair(org.api);
      const license = await createLicense(org.api, {
        product_id: product.id,
        customer_email: 'alias@example.com',
      });

      const listed = await org.api.get(`/v1/licenses?product_id=${product.id}`);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual((await org.api.get(`/api/v1/licenses?product_id=${product.id}`)).body);
      expect(listed.body.licenses.map((l: { id: string }) => l.id)).toEqual([license.id]);

      const fetched = await org.api.get(`/v1/licenses/${license.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(license);

      const download = await org.api.get(`/v1/licenses/${license.id}/download`);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe('application/octet-stream');
      expect(download.headers.get('content-disposition')).toBe(
        `attachment; filename="${license.serial}.lic"`,
      );
      expect(Buffer.from(download.text).toString('base64')).toBe(license.license_blob);

      const verified = await org.api.post('/v1/licenses/verify', {
        license_blob: license.license_blob,
        product_id: product.id,
      });
      expect(verified.status).toBe(200);
      expect(verified.body).toMatchObject({ valid: true, errors: [], license: { serial: license.serial } });

      const created = await org.api.post('/v1/licenses', { product_id: product.id });
      expect(created.status).toBe(201);
      expect((await org.api.delete(`/v1/licenses/${created.body.id}`)).status).toBe(200);
      expect((await org.api.get(`/api/v1/licenses/${created.body.id}`)).body.status).toBe('revoked');
    });
  });
});
