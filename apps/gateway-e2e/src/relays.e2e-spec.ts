import { KeyObject, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { verifyLicense } from '@licensing/license-verifier';
import {
  ApiClient,
  ApiResponse,
  apiKeyWithScopes,
  createLicense,
  decodeBlob,
  expireLicenseInDatabase,
  productWithKeyPair,
  segmentOf,
  waitFor,
} from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';

/**
 * The platform side of relays, end to end through the gateway: issuing a relay file for a floating
 * license (a checkout with the claim `relay`), listing the files, and importing the relay's signed
 * usage reports into analytics, each lease counted once however often it is uploaded. The reports
 * are signed here as the relay signs them: a compact JWS (EdDSA) with the relay's private key.
 */

const DEFAULT_TTL = 2_592_000;
const problem = (response: ApiResponse): string => `${response.status} ${response.body?.code}`;
const fieldsOf = (response: ApiResponse): string[] => [
  ...new Set(((response.body?.errors ?? []) as { field: string }[]).map((error) => error.field)),
];

/** A relay's key pair, as `licensing-relay init` makes one: the public key as a PEM SPKI block. */
function relayKeys(): { privateKey: KeyObject; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

interface Lease {
  id: string;
  fingerprint: string;
  leased_at: string;
  ended_at: string | null;
  seats_in_use: number;
}

/** A relay report as `licensing-relay report export` writes it, signed with `privateKey`. */
function relayReport(
  privateKey: KeyObject,
  file: { id: string; site: string },
  serial: string,
  productId: string,
  leases: Lease[],
  header: Record<string, unknown> = {},
): string {
  const protectedHeader = segmentOf({ alg: 'EdDSA', typ: 'relay-report+jws', kid: file.id, ...header });
  const payload = segmentOf({
    v: 1,
    kind: 'relay_report',
    report_id: randomUUID(),
    relay_file_id: file.id,
    site: file.site,
    serial,
    product_id: productId,
    created_at: new Date().toISOString(),
    leases,
  });
  const signature = sign(null, Buffer.from(`${protectedHeader}.${payload}`), privateKey).toString(
    'base64url',
  );
  return `${protectedHeader}.${payload}.${signature}`;
}

const lease = (fingerprint: string, minutesAgo: number, seats: number): Lease => ({
  id: randomUUID(),
  fingerprint,
  leased_at: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
  ended_at: null,
  seats_in_use: seats,
});

describe('relay files and relay reports', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;
  let productId: string;
  let productKey: string;

  const floating = (body: Record<string, unknown> = {}) =>
    createLicense(org.api, { product_id: productId, license_type: 'floating', max_seats: 5, ...body });
  const issue = (licenseId: string, body: Record<string, unknown>, api: ApiClient = org.api) =>
    api.post(`/api/v1/licenses/${licenseId}/relay-files`, body);
  /** A relay file of a new floating license, with the relay's keys. */
  const relay = async (site = 'plant-7') => {
    const license = await floating();
    const keys = relayKeys();
    const issued = await issue(license.id, { site, public_key: keys.publicPem });
    expect(issued.status).toBe(201);
    return { license, keys, file: issued.body };
  };
  const usageOf = async (licenseId: string) => {
    const usage = await org.api.get(`/api/v1/licenses/${licenseId}/usage?per_page=100`);
    expect(usage.status).toBe(200);
    return usage.body;
  };

  beforeAll(async () => {
    stack = await startStack();
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    const { product } = await productWithKeyPair(org.api);
    productId = product.id;
    productKey = (await org.api.get(`/api/v1/products/${productId}/public-key`)).body.public_key;
  });
  afterAll(async () => {
    await stack.close();
  });

  describe('issuing', () => {
    it('signs a checkout of the license with the claim relay last, verifiable as a license file, on both prefixes', async () => {
      const license = await floating({ valid_days: 365 });
      const keys = relayKeys();
      for (const prefix of ['/api/v1', '/v1']) {
        const before = Math.floor(Date.now() / 1000);
        const answer = await org.api.post(`${prefix}/licenses/${license.id}/relay-files`, {
          site: 'plant-7 floor 2',
          public_key: keys.publicPem,
          ttl_seconds: 86_400,
        });
        expect(answer.status).toBe(201);
        expect(Object.keys(answer.body).sort()).toEqual([
          'created_at',
          'expires_at',
          'id',
          'issued_at',
          'license_id',
          'product_id',
          'public_key',
          'relay_file',
          'site',
        ]);
        expect(answer.body).toMatchObject({
          license_id: license.id,
          product_id: productId,
          site: 'plant-7 floor 2',
          public_key: keys.publicPem,
        });
        const { header, claims } = decodeBlob(answer.body.relay_file);
        const checkout = await org.api.post(`/api/v1/licenses/${license.id}/checkout`, {
          ttl_seconds: 86_400,
        });
        const { claims: checkoutClaims } = decodeBlob(checkout.body.license_blob);
        expect(header).toEqual({ alg: 'EdDSA', typ: 'license+jwt', kid: license.key_pair_id });
        // Exactly a checkout's claims, in the same order, and relay last.
        expect(Object.keys(claims)).toEqual([...Object.keys(checkoutClaims), 'relay']);
        const { iat: _iat, exp: _exp, relay: relayClaim, ...rest } = claims;
        const { iat: _i, exp: _e, ...checkoutRest } = checkoutClaims;
        expect(rest).toEqual(checkoutRest);
        expect(relayClaim).toEqual({
          id: answer.body.id,
          site: 'plant-7 floor 2',
          public_key: keys.publicPem,
        });
        expect(claims.iat).toBeGreaterThanOrEqual(before);
        expect(claims.exp).toBe(claims.iat + 86_400);
        expect(answer.body.issued_at).toBe(new Date(claims.iat * 1000).toISOString());
        expect(answer.body.expires_at).toBe(new Date(claims.exp * 1000).toISOString());

        const verified = await verifyLicense(answer.body.relay_file, productKey, { productId });
        expect(verified.errors).toEqual([]);
        expect(verified.valid).toBe(true);
        expect(verified.license).toMatchObject({
          serial: license.serial,
          license_type: 'floating',
          max_seats: 5,
        });
      }
    });

    it("defaults ttl_seconds to the organization's checkout TTL and caps exp at valid_until", async () => {
      const { file } = await relay();
      const { claims } = decodeBlob(
        (await issue(file.license_id, { site: 's', public_key: relayKeys().publicPem })).body.relay_file,
      );
      expect(claims.exp).toBe(claims.iat + DEFAULT_TTL);

      const short = await floating({ valid_days: 1 });
      const capped = await issue(short.id, {
        site: 's',
        public_key: relayKeys().publicPem,
        ttl_seconds: 31_536_000,
      });
      expect(capped.status).toBe(201);
      expect(decodeBlob(capped.body.relay_file).claims.exp).toBe(
        Math.floor(Date.parse(short.valid_until) / 1000),
      );
      // Seconds, as the file's exp: the stored row says what the file says.
      expect(capped.body.expires_at).toBe(
        new Date(Math.floor(Date.parse(short.valid_until) / 1000) * 1000).toISOString(),
      );
    });

    it('refuses a bad ttl_seconds, site or public_key with a 400 naming the field, and issues nothing', async () => {
      const license = await floating();
      const good = { site: 'plant-7', public_key: relayKeys().publicPem };
      const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
      const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
      const cases: [Record<string, unknown>, string][] = [
        [{ ...good, ttl_seconds: 3_599 }, 'ttl_seconds'],
        [{ ...good, ttl_seconds: 31_536_001 }, 'ttl_seconds'],
        [{ ...good, ttl_seconds: 7200.5 }, 'ttl_seconds'],
        [{ ...good, ttl_seconds: '7200' }, 'ttl_seconds'],
        [{ ...good, site: '' }, 'site'],
        [{ ...good, site: 'x'.repeat(201) }, 'site'],
        [{ ...good, site: 'plant\u0007' }, 'site'],
        [{ public_key: good.public_key }, 'site'],
        [{ site: 'plant-7' }, 'public_key'],
        [{ ...good, public_key: 'not a key' }, 'public_key'],
        [{ ...good, public_key: rsa.export({ type: 'spki', format: 'pem' }).toString() }, 'public_key'],
        [{ ...good, public_key: ec.export({ type: 'spki', format: 'pem' }).toString() }, 'public_key'],
        [
          {
            ...good,
            public_key: generateKeyPairSync('ed25519')
              .privateKey.export({ type: 'pkcs8', format: 'pem' })
              .toString(),
          },
          'public_key',
        ],
        [{ ...good, extra: true }, 'extra'],
      ];
      for (const [body, field] of cases) {
        const answer = await issue(license.id, body);
        expect({ body, status: problem(answer), fields: fieldsOf(answer) }).toEqual({
          body,
          status: '400 validation_failed',
          fields: [field],
        });
      }
      expect((await org.api.get(`/api/v1/relay-files?license_id=${license.id}`)).body.total).toBe(0);
      // The same key in another PEM spelling (CRLF, no final newline) is the same key, kept in one spelling.
      const keys = relayKeys();
      const crlf = await issue(license.id, {
        site: 'plant-7',
        public_key: keys.publicPem.trim().replace(/\n/g, '\r\n'),
      });
      expect(crlf.status).toBe(201);
      expect(crlf.body.public_key).toBe(keys.publicPem);
      expect(decodeBlob(crlf.body.relay_file).claims.relay.public_key).toBe(keys.publicPem);
    });

    it('issues only for a floating license that is active: 422 license_not_floating, license_not_active', async () => {
      const body = { site: 'plant-7', public_key: relayKeys().publicPem };
      for (const type of ['subscription', 'perpetual', 'trial', 'node_locked']) {
        const license = await createLicense(org.api, { product_id: productId, license_type: type });
        expect({ type, answer: problem(await issue(license.id, body)) }).toEqual({
          type,
          answer: '422 license_not_floating',
        });
      }
      const revoked = await floating();
      expect((await org.api.delete(`/api/v1/licenses/${revoked.id}`)).status).toBe(200);
      expect(problem(await issue(revoked.id, body))).toBe('422 license_not_active');
      const suspended = await floating();
      expect((await org.api.patch(`/api/v1/licenses/${suspended.id}`, { status: 'suspended' })).status).toBe(
        200,
      );
      expect(problem(await issue(suspended.id, body))).toBe('422 license_not_active');
      const expired = await floating();
      await expireLicenseInDatabase(expired.id);
      expect(problem(await issue(expired.id, body))).toBe('422 license_not_active');
      for (const license of [revoked, suspended, expired]) {
        expect((await org.api.get(`/api/v1/relay-files?license_id=${license.id}`)).body.total).toBe(0);
      }
    });

    it("answers 404 for another organization's or an unknown license, 403 to client and read keys and to a license token", async () => {
      const license = await floating();
      const body = { site: 'plant-7', public_key: relayKeys().publicPem };
      expect(problem(await issue(license.id, body, other.api))).toBe('404 not_found');
      expect(problem(await issue(randomUUID(), body))).toBe('404 not_found');
      const [client, read] = await Promise.all([
        apiKeyWithScopes(org.api, ['client']),
        apiKeyWithScopes(org.api, ['read']),
      ]);
      const token = await org.api.post(`/api/v1/licenses/${license.id}/tokens`, {});
      expect(token.status).toBe(201);
      const tokenApi = org.api.withKey(token.body.token as string);
      for (const api of [client.api, read.api, tokenApi]) {
        expect(problem(await issue(license.id, body, api))).toBe('403 forbidden');
      }
      // The token reads no relay file either.
      expect(problem(await tokenApi.get(`/api/v1/relay-files?license_id=${license.id}`))).toBe(
        '403 forbidden',
      );
      expect((await org.api.get(`/api/v1/relay-files?license_id=${license.id}`)).body.total).toBe(0);
    });

    it('replays a creation sent again with its Idempotency-Key, and spends from the admin and read rate limits', async () => {
      const license = await floating();
      const body = { site: 'plant-7', public_key: relayKeys().publicPem };
      const key = randomUUID();
      const first = await org.api.request('POST', `/api/v1/licenses/${license.id}/relay-files`, body, {
        'idempotency-key': key,
      });
      const again = await org.api.request('POST', `/api/v1/licenses/${license.id}/relay-files`, body, {
        'idempotency-key': key,
      });
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
      expect((await org.api.get(`/api/v1/relay-files?license_id=${license.id}`)).body.total).toBe(1);

      const policy = (response: ApiResponse) => response.headers.get('ratelimit-policy');
      const adminPolicy = policy(await org.api.patch(`/api/v1/licenses/${license.id}`, { customer_id: 'c' }));
      const readPolicy = policy(await org.api.get('/api/v1/licenses?per_page=1'));
      expect(adminPolicy).not.toBe(readPolicy);
      expect(policy(first)).toBe(adminPolicy);
      expect(policy(await org.api.post('/api/v1/relay-reports', { report: 'x' }))).toBe(adminPolicy);
      expect(policy(await org.api.get('/api/v1/relay-files'))).toBe(readPolicy);
      expect(policy(await org.api.get(`/api/v1/relay-files/${first.body.id}`))).toBe(readPolicy);
    });

    it('writes an audit entry of the creation, without the file', async () => {
      const { file, keys } = await relay('audited site');
      let entries: any[] = [];
      await waitFor(
        async () => {
          entries = (
            await org.api.get(`/api/v1/audit-events?resource_type=relay_file&resource_id=${file.id}`)
          ).body.audit_events;
          return entries.length === 1;
        },
        { what: "the relay file's audit entry" },
      );
      expect(entries[0]).toMatchObject({
        action: 'created',
        resource_type: 'relay_file',
        resource_id: file.id,
      });
      expect(entries[0].changes).toEqual({
        license_id: { from: null, to: file.license_id },
        product_id: { from: null, to: productId },
        site: { from: null, to: 'audited site' },
        public_key: { from: null, to: keys.publicPem },
        issued_at: { from: null, to: file.issued_at },
        expires_at: { from: null, to: file.expires_at },
      });
    });
  });

  describe('listing', () => {
    it('lists the files without the file itself, newest first, by license, paginated, to admin and read keys', async () => {
      const license = await floating();
      const ids: string[] = [];
      for (const site of ['a', 'b', 'c']) {
        const issued = await issue(license.id, { site, public_key: relayKeys().publicPem });
        expect(issued.status).toBe(201);
        ids.unshift(issued.body.id);
      }
      const read = (await apiKeyWithScopes(org.api, ['read'])).api;
      for (const api of [org.api, read]) {
        const page = await api.get(`/api/v1/relay-files?license_id=${license.id}&per_page=2`);
        expect(page.status).toBe(200);
        expect(page.body.total).toBe(3);
        expect(page.body.relay_files.map((f: any) => f.id)).toEqual(ids.slice(0, 2));
        expect(page.body.relay_files[0]).not.toHaveProperty('relay_file');
        const last = await api.get(`/v1/relay-files?license_id=${license.id}&per_page=2&page=2`);
        expect(last.body.relay_files.map((f: any) => f.id)).toEqual(ids.slice(2));
        const one = await api.get(`/api/v1/relay-files/${ids[0]}`);
        expect(one.status).toBe(200);
        expect(one.body).toEqual(page.body.relay_files[0]);
      }
      const all = await org.api.get('/api/v1/relay-files?per_page=100');
      expect(all.body.relay_files.map((f: any) => f.id)).toEqual(expect.arrayContaining(ids));
      const client = (await apiKeyWithScopes(org.api, ['client'])).api;
      expect(problem(await client.get(`/api/v1/relay-files/${ids[0]}`))).toBe('403 forbidden');
      expect(problem(await org.api.get('/api/v1/relay-files?license_id=nope'))).toBe('400 validation_failed');
      expect(problem(await org.api.get('/api/v1/relay-files?site=a'))).toBe('400 validation_failed');
      expect(problem(await org.api.get('/api/v1/relay-files/nope'))).toBe('400 validation_failed');
    });

    it("keeps organizations apart: another organization's file is a 404, its license filter an empty list", async () => {
      const { file, license } = await relay();
      expect(problem(await other.api.get(`/api/v1/relay-files/${file.id}`))).toBe('404 not_found');
      const filtered = await other.api.get(`/api/v1/relay-files?license_id=${license.id}`);
      expect(filtered.body).toEqual({ relay_files: [], total: 0 });
      const theirs = await other.api.get('/api/v1/relay-files?per_page=100');
      expect(theirs.body.relay_files.map((f: any) => f.id)).not.toContain(file.id);
      expect(problem(await org.api.get(`/api/v1/relay-files/${randomUUID()}`))).toBe('404 not_found');
    });
  });

  describe('importing reports', () => {
    const importReport = (report: string, api: ApiClient = org.api) =>
      api.post('/api/v1/relay-reports', { report });

    it('counts each lease once however often it is uploaded, in one report or several', async () => {
      const { license, keys, file } = await relay();
      const first = [lease('machine-a', 90, 1), lease('machine-b', 80, 2), lease('machine-c', 70, 3)];
      const report = relayReport(keys.privateKey, file, license.serial, productId, first);
      const answer = await importReport(report);
      expect(answer.status).toBe(200);
      const payload = JSON.parse(Buffer.from(report.split('.')[1]!, 'base64url').toString());
      expect(answer.body).toEqual({
        report_id: payload.report_id,
        relay_file_id: file.id,
        leases: 3,
        counted: 3,
      });
      await waitFor(async () => (await usageOf(license.id)).syncs === 3, {
        what: 'the three leases to be counted',
      });

      // The same report again, and a second report repeating two leases beside a new one.
      expect((await importReport(report)).body).toMatchObject({ leases: 3, counted: 3 });
      const fourth = lease('machine-d', 60, 2);
      const again = relayReport(keys.privateKey, file, license.serial, productId, [
        first[1]!,
        first[2]!,
        fourth,
        fourth,
      ]);
      expect((await importReport(again, org.api)).body).toMatchObject({ leases: 4, counted: 3 });
      await waitFor(async () => (await usageOf(license.id)).syncs === 4, {
        what: 'the new lease to be counted',
      });

      // A marker sync: once it is counted, anything imported before it would have been too.
      const client = (await apiKeyWithScopes(org.api, ['client'])).api;
      expect((await client.post('/api/v1/licenses/sync', { license_serial: license.serial })).status).toBe(
        200,
      );
      await waitFor(async () => (await usageOf(license.id)).syncs === 5, { what: 'the marker sync' });
      const usage = await usageOf(license.id);
      expect(usage.syncs).toBe(5);
      expect(usage.peak_seats_in_use).toBe(3);
      // Each lease is placed at its leased_at, for the machine that held it.
      const byMachine = Object.fromEntries(
        usage.fingerprints.map((f: any) => [f.fingerprint, f.last_sync_at]),
      );
      expect(byMachine).toEqual({
        'machine-a': first[0]!.leased_at,
        'machine-b': first[1]!.leased_at,
        'machine-c': first[2]!.leased_at,
        'machine-d': fourth.leased_at,
      });

      const day = 86_400_000;
      const range = `from=${new Date(Date.now() - day).toISOString()}&to=${new Date(Date.now() + day).toISOString()}`;
      const analytics = await org.api.get(
        `/api/v1/analytics/usage?${range}&interval=hour&product_id=${productId}`,
      );
      expect(analytics.status).toBe(200);
      const ofLicense = analytics.body.buckets.reduce((sum: number, b: any) => sum + b.syncs, 0);
      // The product's other licenses here sync nothing: every report of the range is this license's.
      expect(ofLicense).toBe(5);
      expect(Math.max(...analytics.body.buckets.map((b: any) => b.peak_seats_in_use ?? 0))).toBe(3);
    });

    it('counts concurrent uploads of one report once', async () => {
      const { license, keys, file } = await relay();
      const leases = [lease('machine-a', 30, 1), lease('machine-b', 20, 2)];
      const report = relayReport(keys.privateKey, file, license.serial, productId, leases);
      const answers = await Promise.all(Array.from({ length: 6 }, () => importReport(report)));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
      const client = (await apiKeyWithScopes(org.api, ['client'])).api;
      expect((await client.post('/api/v1/licenses/sync', { license_serial: license.serial })).status).toBe(
        200,
      );
      await waitFor(async () => (await usageOf(license.id)).syncs >= 3, {
        what: 'the leases and the marker',
      });
      expect((await usageOf(license.id)).syncs).toBe(3);
    });

    it('places an old lease on its own day, and a lease dated in the future at the import', async () => {
      const { license, keys, file } = await relay();
      const day = 86_400_000;
      const old = { ...lease('machine-old', 40 * 24 * 60, 2) };
      const future = { ...lease('machine-future', -24 * 60, 1) };
      const before = Date.now();
      const answer = await importReport(
        relayReport(keys.privateKey, file, license.serial, productId, [old, future]),
      );
      expect(answer.body).toMatchObject({ leases: 2, counted: 2 });
      // The old day's usage holds the old lease (the daily rollups are kept far longer than raw reports).
      const range = (at: number) =>
        `from=${new Date(at - day).toISOString()}&to=${new Date(at + day).toISOString()}&interval=day&product_id=${productId}`;
      let buckets: any[] = [];
      await waitFor(
        async () => {
          buckets = (await org.api.get(`/api/v1/analytics/usage?${range(Date.parse(old.leased_at))}`)).body
            .buckets;
          return buckets.length > 0;
        },
        { what: "the old lease in its day's usage" },
      );
      expect(buckets.reduce((sum, b) => sum + b.syncs, 0)).toBe(1);
      expect(buckets[0].peak_seats_in_use).toBe(2);
      await waitFor(async () => (await usageOf(license.id)).total === 2, { what: 'both machines' });
      const seen = Object.fromEntries(
        (await usageOf(license.id)).fingerprints.map((f: any) => [f.fingerprint, Date.parse(f.last_sync_at)]),
      );
      expect(seen['machine-old']).toBe(Date.parse(old.leased_at));
      expect(seen['machine-future']).toBeGreaterThanOrEqual(before);
      expect(seen['machine-future']).toBeLessThanOrEqual(Date.now());
    });

    it('refuses a tampered payload, another key, a malformed report or another type: 422 report_signature_invalid', async () => {
      const { license, keys, file } = await relay();
      const leases = [lease('machine-a', 10, 1)];
      const report = relayReport(keys.privateKey, file, license.serial, productId, leases);
      const [h, p, s] = report.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
      const tampered = `${h}.${segmentOf({ ...claims, leases: [{ ...leases[0], seats_in_use: 5 }] })}.${s}`;
      const wrongKey = relayReport(relayKeys().privateKey, file, license.serial, productId, leases);
      const otherTyp = relayReport(keys.privateKey, file, license.serial, productId, leases, { typ: 'JWT' });
      const notAReport = (() => {
        const header = segmentOf({ alg: 'EdDSA', typ: 'relay-report+jws', kid: file.id });
        const body = segmentOf({ v: 1, kind: 'something_else' });
        return `${header}.${body}.${sign(null, Buffer.from(`${header}.${body}`), keys.privateKey).toString('base64url')}`;
      })();
      const cases: [string, string][] = [
        ['tampered payload', tampered],
        ['signed with another key', wrongKey],
        ['another typ', otherTyp],
        ['a payload that is not a relay report', notAReport],
        ['not a JWS', 'not a jws'],
        [
          'a kid that is not an id',
          relayReport(keys.privateKey, file, license.serial, productId, leases, { kid: 'x' }),
        ],
        ['no signature', `${h}.${p}.`],
      ];
      for (const [what, bad] of cases) {
        expect({ what, answer: problem(await importReport(bad)) }).toEqual({
          what,
          answer: '422 report_signature_invalid',
        });
      }
      expect((await importReport(report)).status).toBe(200);
    });

    it("answers 404 for an unknown relay file or another organization's, and 422 for a serial other than the file's license", async () => {
      const { license, keys, file } = await relay();
      const leases = [lease('machine-a', 10, 1)];
      const unknown = relayReport(
        keys.privateKey,
        { ...file, id: randomUUID() },
        license.serial,
        productId,
        leases,
      );
      expect(problem(await importReport(unknown))).toBe('404 not_found');
      const report = relayReport(keys.privateKey, file, license.serial, productId, leases);
      expect(problem(await importReport(report, other.api))).toBe('404 not_found');
      const otherLicense = await floating();
      const mismatch = relayReport(keys.privateKey, file, otherLicense.serial, productId, leases);
      expect(problem(await importReport(mismatch))).toBe('422 report_serial_mismatch');
      // None of these counted anything; the valid one does.
      expect((await importReport(report)).status).toBe(200);
      await waitFor(async () => (await usageOf(license.id)).syncs === 1, { what: 'the valid report' });
      expect((await usageOf(otherLicense.id)).syncs).toBe(0);
    });

    it('answers 403 to client and read keys and to a license token, 400 to a bad body and 413 to an oversized one', async () => {
      const { license, keys, file } = await relay();
      const report = relayReport(keys.privateKey, file, license.serial, productId, [
        lease('machine-a', 5, 1),
      ]);
      const [client, read] = await Promise.all([
        apiKeyWithScopes(org.api, ['client']),
        apiKeyWithScopes(org.api, ['read']),
      ]);
      const token = await org.api.post(`/api/v1/licenses/${license.id}/tokens`, {});
      for (const api of [client.api, read.api, org.api.withKey(token.body.token as string)]) {
        expect(problem(await importReport(report, api))).toBe('403 forbidden');
      }
      expect(problem(await org.api.post('/api/v1/relay-reports', {}))).toBe('400 validation_failed');
      expect(problem(await org.api.post('/api/v1/relay-reports', { report, extra: 1 }))).toBe(
        '400 validation_failed',
      );
      expect(problem(await org.api.post('/api/v1/relay-reports', { report: 7 }))).toBe(
        '400 validation_failed',
      );
      const oversized = await org.api.post(
        '/api/v1/relay-reports',
        JSON.stringify({ report: 'a'.repeat(1_100_000) }),
      );
      expect(problem(oversized)).toBe('413 payload_too_large');
      // Just under the limit, the report still reaches the license service, and is refused there.
      const nearLimit = await org.api.post('/api/v1/relay-reports', {
        report: `${'a'.repeat(1_040_000)}.b.c`,
      });
      expect(problem(nearLimit)).toBe('422 report_signature_invalid');
      expect((await usageOf(license.id)).syncs).toBe(0);
    });
  });
});
