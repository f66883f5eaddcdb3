import { generateKeyPairSync } from 'node:crypto';
import { buildCheckoutClaims, parsePrivateKey, signJws } from '@licensing/license-format';
import { verifyLicense } from '@licensing/license-verifier';
import {
  ApiClient,
  ApiResponse,
  blobOf,
  createLicense,
  decodeBlob,
  errorCodes,
  expireLicenseInDatabase,
  productWithKeyPair,
  uniqueCode,
  waitFor,
} from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';

/**
 * License checkout, end to end through the gateway: a license file signed now that expires on its
 * own (`exp`), for a license or for one activation's machine; every verifier refuses it past `exp`
 * with `file_expired`.
 */

const DEFAULT_TTL = 2_592_000;
const problem = (response: ApiResponse): string => `${response.status} ${response.body?.code}`;
const fieldsOf = (response: ApiResponse): string[] => [
  ...new Set(((response.body?.errors ?? []) as { field: string }[]).map((error) => error.field)),
];

describe('license checkout', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;
  let productId: string;
  let publicKey: string;

  const newLicense = (body: Record<string, unknown> = {}) =>
    createLicense(org.api, { product_id: productId, max_seats: 5, ...body });
  const activate = async (licenseId: string, fingerprint = 'machine-a', api: ApiClient = org.api) => {
    const created = await api.post('/api/v1/activations', { license_id: licenseId, fingerprint });
    expect(created.status).toBe(201);
    return created.body;
  };
  const checkoutLicense = (licenseId: string, body: Record<string, unknown> = {}, api = org.api) =>
    api.post(`/api/v1/licenses/${licenseId}/checkout`, body);
  const checkoutActivation = (activationId: string, body: Record<string, unknown> = {}, api = org.api) =>
    api.post(`/api/v1/activations/${activationId}/checkout`, body);
  const tokenOf = async (licenseId: string): Promise<ApiClient> => {
    const created = await org.api.post(`/api/v1/licenses/${licenseId}/tokens`, {});
    expect(created.status).toBe(201);
    return org.api.withKey(created.body.token as string);
  };
  const apiVerify = (blob: string, body: Record<string, unknown> = { product_id: productId }) =>
    org.api.post('/api/v1/licenses/verify', { license_blob: blob, ...body });

  beforeAll(async () => {
    stack = await startStack();
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    const { product } = await productWithKeyPair(org.api);
    productId = product.id;
    publicKey = (await org.api.get(`/api/v1/products/${productId}/public-key`)).body.public_key;
  });
  afterAll(async () => {
    await stack.close();
  });

  describe('a license', () => {
    it("carries the limits of the license's policy as they are now, and the SDK exposes them", async () => {
      const created = await org.api.post('/api/v1/policies', {
        product_id: productId,
        name: 'Workstation',
        max_machines: 2,
        max_processes: 3,
        overage: '1.5x',
        heartbeat_interval_seconds: 600,
        heartbeat_grace_seconds: 60,
        check_in_interval_days: 7,
        machine_matching: 'most',
        uses_reset: 'month',
      });
      expect(created.status).toBe(201);
      const license = await createLicense(org.api, { policy_id: created.body.id, max_uses: 100 });
      const answer = await checkoutLicense(license.id);
      expect(answer.status).toBe(200);
      const policy = {
        id: created.body.id,
        name: 'Workstation',
        max_machines: 2,
        max_processes: 3,
        max_uses: 100,
        uses_reset: 'month',
        heartbeat_interval_seconds: 600,
        heartbeat_grace_seconds: 60,
        check_in_interval_days: 7,
        overage: '1.5x',
        machine_matching: 'most',
      };
      expect(decodeBlob(answer.body.license_blob).claims.policy).toEqual(policy);
      const verified = await verifyLicense(answer.body.license_blob, publicKey, { productId });
      expect(verified.license?.policy).toEqual(policy);
      // A license without a policy carries none.
      const plain = await checkoutLicense((await newLicense()).id);
      expect(decodeBlob(plain.body.license_blob).claims.policy).toBeUndefined();
    });

    it('signs the license now, with iat, exp = iat + ttl and its entitlements, on both prefixes', async () => {
      const code = uniqueCode('ent');
      expect((await org.api.post('/api/v1/entitlements', { code, name: 'Cloud sync' })).status).toBe(201);
      const license = await newLicense({ valid_days: 365 });
      const attached = await org.api.post(`/api/v1/licenses/${license.id}/entitlements`, { codes: [code] });
      expect(attached.status).toBe(200);
      for (const prefix of ['/api/v1', '/v1']) {
        const before = Math.floor(Date.now() / 1000);
        const answer = await org.api.post(`${prefix}/licenses/${license.id}/checkout`, {
          ttl_seconds: 86_400,
        });
        expect(answer.status).toBe(200);
        expect(Object.keys(answer.body).sort()).toEqual(['expires_at', 'issued_at', 'license_blob']);
        const { header, claims } = decodeBlob(answer.body.license_blob);
        expect(header).toMatchObject({ typ: 'license+jwt', kid: license.key_pair_id });
        expect(claims.iat).toBeGreaterThanOrEqual(before);
        expect(claims.exp).toBe(claims.iat + 86_400);
        expect(claims).toMatchObject({
          jti: license.id,
          sub: license.serial,
          valid_until: license.valid_until,
          entitlements: [code],
        });
        expect(claims).not.toHaveProperty('fingerprint');
        expect(answer.body.issued_at).toBe(new Date(claims.iat * 1000).toISOString());
        expect(answer.body.expires_at).toBe(new Date(claims.exp * 1000).toISOString());
      }
      // The license keeps its own file: a checkout stores nothing.
      const stored = await org.api.get(`/api/v1/licenses/${license.id}`);
      expect(decodeBlob(stored.body.license_blob).claims.exp).toBe(
        Math.floor(Date.parse(license.valid_until) / 1000),
      );
    });

    it("defaults ttl_seconds to the organization's checkout TTL", async () => {
      const license = await newLicense({ valid_days: 365 });
      const answer = await checkoutLicense(license.id);
      expect(answer.status).toBe(200);
      const { claims } = decodeBlob(answer.body.license_blob);
      expect(claims.exp - claims.iat).toBe(DEFAULT_TTL);

      const changed = await other.api.patch('/api/v1/organizations/current', { checkout_ttl_seconds: 7_200 });
      expect(changed.status).toBe(200);
      try {
        const { product } = await productWithKeyPair(other.api);
        const theirs = await createLicense(other.api, { product_id: product.id });
        // The gateway caches the organization's settings for a moment.
        await waitFor(
          async () => {
            const { claims: c } = decodeBlob(
              (await checkoutLicense(theirs.id, {}, other.api)).body.license_blob,
            );
            return c.exp - c.iat === 7_200;
          },
          { what: 'the new checkout TTL' },
        );
      } finally {
        await other.api.patch('/api/v1/organizations/current', { checkout_ttl_seconds: DEFAULT_TTL });
      }
    });

    it.each([
      ['below 3,600', { ttl_seconds: 3_599 }],
      ['above 31,536,000', { ttl_seconds: 31_536_001 }],
      ['not an integer', { ttl_seconds: 3_600.5 }],
      ['a string', { ttl_seconds: '3600' }],
      ['null', { ttl_seconds: null }],
    ])('refuses ttl_seconds %s with a 400 naming the field', async (_name, body) => {
      const license = await newLicense();
      const activation = await activate(license.id);
      for (const answer of [
        await checkoutLicense(license.id, body),
        await checkoutActivation(activation.id, body),
      ]) {
        expect(problem(answer)).toBe('400 validation_failed');
        expect(fieldsOf(answer)).toEqual(['ttl_seconds']);
      }
    });

    it('refuses an unknown field', async () => {
      const license = await newLicense();
      expect(problem(await checkoutLicense(license.id, { ttl: 3_600 }))).toBe('400 validation_failed');
    });

    it("accepts both bounds, and never lets the file outlive the license's valid_until", async () => {
      const license = await newLicense({ valid_days: 30 });
      const short = await checkoutLicense(license.id, { ttl_seconds: 3_600 });
      expect(short.status).toBe(200);
      const { claims } = decodeBlob(short.body.license_blob);
      expect(claims.exp - claims.iat).toBe(3_600);
      const long = await checkoutLicense(license.id, { ttl_seconds: 31_536_000 });
      expect(long.status).toBe(200);
      expect(decodeBlob(long.body.license_blob).claims.exp).toBe(
        Math.floor(Date.parse(license.valid_until) / 1000),
      );
      expect(long.body.expires_at).toBe(
        new Date(Math.floor(Date.parse(license.valid_until) / 1000) * 1000).toISOString(),
      );
    });

    it('gives a perpetual license a file that expires', async () => {
      const license = await newLicense({ license_type: 'perpetual' });
      const answer = await checkoutLicense(license.id, { ttl_seconds: 3_600 });
      expect(answer.status).toBe(200);
      const { claims } = decodeBlob(answer.body.license_blob);
      expect(claims.valid_until).toBeNull();
      expect(claims.exp - claims.iat).toBe(3_600);
    });
  });

  describe('an activation', () => {
    it("binds the file to the activation's fingerprint", async () => {
      const license = await newLicense();
      const activation = await activate(license.id, 'machine-a');
      const answer = await checkoutActivation(activation.id, { ttl_seconds: 7_200 });
      expect(answer.status).toBe(200);
      const { claims } = decodeBlob(answer.body.license_blob);
      expect(claims).toMatchObject({ jti: license.id, fingerprint: 'machine-a' });
      expect(claims.exp - claims.iat).toBe(7_200);

      const own = await verifyLicense(answer.body.license_blob, publicKey, { fingerprint: 'machine-a' });
      expect(own).toMatchObject({ valid: true, errors: [] });
      expect(own.license).toMatchObject({ fingerprint: 'machine-a', expires_at: answer.body.expires_at });
      const elsewhere = await verifyLicense(answer.body.license_blob, publicKey, {
        fingerprint: 'machine-b',
      });
      expect(elsewhere.errors.map((e) => e.code)).toEqual(['fingerprint_mismatch']);
    });
  });

  describe('verification', () => {
    it('verifies with the SDK and with the API, with its issue and expiry times', async () => {
      const code = uniqueCode('ent');
      expect((await org.api.post('/api/v1/entitlements', { code, name: 'Export' })).status).toBe(201);
      const license = await newLicense();
      await org.api.post(`/api/v1/licenses/${license.id}/entitlements`, { codes: [code] });
      const answer = await checkoutLicense(license.id, { ttl_seconds: 3_600 });
      const sdk = await verifyLicense(answer.body.license_blob, publicKey, { productId });
      expect(sdk).toMatchObject({ valid: true, errors: [] });
      expect(sdk.license).toMatchObject({
        issued_at: answer.body.issued_at,
        expires_at: answer.body.expires_at,
        entitlements: [code],
        is_file_expired: false,
      });
      const api = await apiVerify(answer.body.license_blob);
      expect(api.status).toBe(200);
      expect(api.body).toMatchObject({ valid: true, errors: [], license: { entitlements: [code] } });
    });

    it('the SDK refuses the file from its exp on with file_expired, and not a second before', async () => {
      const license = await newLicense();
      const answer = await checkoutLicense(license.id, { ttl_seconds: 3_600 });
      const exp = decodeBlob(answer.body.license_blob).claims.exp as number;
      const at = async (now: number) =>
        (await verifyLicense(answer.body.license_blob, publicKey, { now })).errors.map((e) => e.code);
      expect(await at(exp * 1000 - 1)).toEqual([]);
      expect(await at(exp * 1000)).toEqual(['file_expired']);
    });

    it("the API's verify refuses a file past its exp with file_expired", async () => {
      // The service signs only with a clock that reads now: this file is signed here, with a key of
      // this test, as the service signs a checkout, and verified with that key (`public_key` mode).
      const license = await newLicense();
      const { privateKey, publicKey: pem } = generateKeyPairSync('ed25519', {
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      });
      const signedAt = new Date(Date.now() - 2 * 3_600_000);
      const claims = buildCheckoutClaims(
        {
          licenseId: license.id,
          serial: license.serial,
          orgId: org.id,
          productId,
          productCode: license.product_code,
          licenseType: license.license_type,
          customerId: null,
          customerEmail: null,
          features: license.features,
          maxSeats: license.max_seats,
          hardwareBinding: null,
          validFrom: new Date(license.valid_from),
          validUntil: new Date(license.valid_until),
          issuedAt: signedAt,
        },
        { expiresAt: new Date(signedAt.getTime() + 3_600_000) },
      );
      const blob = blobOf(
        signJws(claims, { kid: license.key_pair_id, privateKey: parsePrivateKey(privateKey) }),
      );
      const answer = await apiVerify(blob, { public_key: pem, product_id: productId });
      expect(answer.status).toBe(200);
      expect(answer.body.valid).toBe(false);
      expect(errorCodes(answer.body)).toEqual(['file_expired']);
      expect(answer.body.errors[0].message).toMatch(/expired/);
      // The same file within its life verifies.
      const fresh = buildCheckoutClaims(
        { ...claimsInputOf(claims), issuedAt: new Date() },
        { expiresAt: new Date(Date.now() + 3_600_000) },
      );
      const freshBlob = blobOf(
        signJws(fresh, { kid: license.key_pair_id, privateKey: parsePrivateKey(privateKey) }),
      );
      expect((await apiVerify(freshBlob, { public_key: pem, product_id: productId })).body).toMatchObject({
        valid: true,
        errors: [],
      });
    });

    it('an ordinary download still verifies as before, with exp its valid_until', async () => {
      const license = await newLicense();
      const sdk = await verifyLicense(license.license_blob, publicKey);
      expect(sdk).toMatchObject({ valid: true });
      expect(sdk.license).toMatchObject({
        expires_at: new Date(Math.floor(Date.parse(license.valid_until) / 1000) * 1000).toISOString(),
        is_file_expired: false,
      });
      expect((await apiVerify(license.license_blob)).body).toMatchObject({ valid: true, errors: [] });
    });
  });

  describe('a license that is not active', () => {
    it.each([
      ['a revoked', (id: string) => org.api.delete(`/api/v1/licenses/${id}`)],
      ['a suspended', (id: string) => org.api.patch(`/api/v1/licenses/${id}`, { status: 'suspended' })],
      ['an expired', (id: string) => expireLicenseInDatabase(id)],
    ])('refuses %s license with 422 license_not_active on both routes', async (_status, change) => {
      const license = await newLicense();
      const activation = await activate(license.id);
      await change(license.id);
      expect(problem(await checkoutLicense(license.id))).toBe('422 license_not_active');
      expect(problem(await checkoutActivation(activation.id))).toBe('422 license_not_active');
    });
  });

  describe('reach', () => {
    it("answers 404 for another organization's license and activation", async () => {
      const license = await newLicense();
      const activation = await activate(license.id);
      expect(problem(await checkoutLicense(license.id, {}, other.api))).toBe('404 not_found');
      expect(problem(await checkoutActivation(activation.id, {}, other.api))).toBe('404 not_found');
    });

    it('lets a license token check out its license and its activations, and nothing else', async () => {
      const mine = await newLicense();
      const theirs = await newLicense();
      const token = await tokenOf(mine.id);
      const ownSeat = await activate(mine.id, 'machine-own');
      const otherSeat = await activate(theirs.id, 'machine-other');
      expect((await checkoutLicense(mine.id, {}, token)).status).toBe(200);
      expect((await checkoutActivation(ownSeat.id, {}, token)).status).toBe(200);
      expect(problem(await checkoutLicense(theirs.id, {}, token))).toBe('404 not_found');
      expect(problem(await checkoutActivation(otherSeat.id, {}, token))).toBe('404 not_found');
    });

    it('lets a machine token check out its own activation only', async () => {
      const license = await newLicense();
      const token = await tokenOf(license.id);
      const seat = await token.post('/api/v1/activations', {
        license_id: license.id,
        fingerprint: 'machine-1',
      });
      expect(seat.status).toBe(201);
      const machine = org.api.withKey(seat.body.machine_token as string);
      const sibling = await activate(license.id, 'machine-2');
      const own = await checkoutActivation(seat.body.id, {}, machine);
      expect(own.status).toBe(200);
      expect(decodeBlob(own.body.license_blob).claims.fingerprint).toBe('machine-1');
      expect(problem(await checkoutActivation(sibling.id, {}, machine))).toBe('404 not_found');
      expect(problem(await checkoutLicense(license.id, {}, machine))).toBe('403 forbidden');
    });
  });
});

/** The license part of checkout claims, to sign them again at another time. */
function claimsInputOf(
  claims: ReturnType<typeof buildCheckoutClaims>,
): Parameters<typeof buildCheckoutClaims>[0] {
  return {
    licenseId: claims.jti,
    serial: claims.sub,
    orgId: claims.iss,
    productId: claims.product_id,
    productCode: claims.product_code,
    licenseType: claims.license_type,
    customerId: claims.customer_id,
    customerEmail: claims.customer_email,
    features: claims.features,
    maxSeats: claims.max_seats,
    hardwareBinding: claims.hardware_binding,
    validFrom: new Date(claims.valid_from),
    validUntil: claims.valid_until === null ? null : new Date(claims.valid_until),
    issuedAt: new Date(claims.iat * 1000),
  };
}
