import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import {
  blobFromJws,
  buildClaims,
  generateKeyPair,
  generateSerial,
  parsePrivateKey,
  signJws,
  type GeneratedKeyPair,
} from '@licensing/license-format';
import { TEST_DATABASE_URL } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import {
  blobOf,
  createLicense,
  decodeBlob,
  errorCodes,
  expireLicenseInDatabase,
  productWithKeyPair,
  segmentOf,
  sql,
} from './support/fixtures';

const DAY_MS = 86_400_000;
const VERIFY = '/api/v1/licenses/verify';

describe('POST /licenses/verify', () => {
  let stack: TestStack;
  let orgA: TestOrganization;
  let orgB: TestOrganization;
  /** Two products of org A, each with its own key pair. */
  let productA: any;
  let keyPairA: any;
  let productA2: any;
  let pemA: string;
  let pemA2: string;
  /** A product of org B and its key pair. */
  let productB: any;
  let keyPairB: any;
  /** A valid license of productA (never modified by a test). */
  let license: any;
  /** Our own key, standing in for an issuer the service has never seen. */
  let ownKey: GeneratedKeyPair;

  beforeAll(async () => {
    stack = await startStack();
    [orgA, orgB] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    ({ product: productA, keyPair: keyPairA } = await productWithKeyPair(orgA.api, {
      default_features: ['pro'],
      default_valid_days: 30,
    }));
    ({ product: productA2 } = await productWithKeyPair(orgA.api));
    ({ product: productB, keyPair: keyPairB } = await productWithKeyPair(orgB.api));
    pemA = (await orgA.api.get(`/api/v1/products/${productA.id}/public-key`)).body.public_key;
    pemA2 = (await orgA.api.get(`/api/v1/products/${productA2.id}/public-key`)).body.public_key;
    license = await createLicense(orgA.api, {
      product_id: productA.id,
      customer_id: 'cus_42',
      customer_email: 'ada@example.com',
    });
    ownKey = await generateKeyPair('ed25519');
  });
  afterAll(() => stack.close());

  /** A license signed with our own key: only public_key mode with ownKey's PEM can check it. */
  function forgedBlob(
    validFrom: Date,
    validUntil: Date | null,
    productId = randomUUID(),
  ): { blob: string; serial: string } {
    const serial = generateSerial('forged');
    const claims = buildClaims({
      licenseId: randomUUID(),
      serial,
      orgId: orgA.id,
      productId,
      productCode: 'forged',
      licenseType: 'subscription',
      customerId: 'cus_forged',
      customerEmail: null,
      features: ['everything'],
      maxSeats: 1,
      hardwareBinding: null,
      validFrom,
      validUntil,
      issuedAt: new Date(),
    });
    const jws = signJws(claims, { kid: randomUUID(), privateKey: parsePrivateKey(ownKey.privateKeyPem) });
    return { blob: blobFromJws(jws), serial };
  }

  /** The license's JWS with a different header and/or payload, the original signature kept unless given. */
  function rewritten(
    blob: string,
    changes: { header?: object; claims?: object; signature?: string },
  ): string {
    const { header, claims, segments } = decodeBlob(blob);
    const headerSegment = segmentOf({ ...header, ...changes.header });
    const payloadSegment = segmentOf({ ...claims, ...changes.claims });
    return blobOf(`${headerSegment}.${payloadSegment}.${changes.signature ?? segments[2]}`);
  }

  const verify = (body: Record<string, unknown>, api = orgA.api) => api.post(VERIFY, body);

  const expectErrors = async (body: Record<string, unknown>, codes: string[], api = orgA.api) => {
    const response = await verify(body, api);
    expect(response.status).toBe(200);
    expect(errorCodes(response.body)).toEqual(codes);
    expect(response.body.valid).toBe(codes.length === 0);
    for (const error of response.body.errors) expect(typeof error.message).toBe('string');
    return response.body;
  };

  describe('valid licenses', () => {
    it('answers valid with no errors and the license summary for a valid blob and its product_id', async () => {
      const response = await verify({ license_blob: license.license_blob, product_id: productA.id });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        valid: true,
        errors: [],
        license: {
          serial: license.serial,
          product_id: productA.id,
          customer_id: 'cus_42',
          features: ['pro'],
          entitlements: [],
          valid_from: license.valid_from,
          valid_until: license.valid_until,
          is_expired: false,
        },
      });
    });

    it('answers valid in public_key mode with the PEM from GET /products/:id/public-key', async () => {
      const response = await verify({ license_blob: license.license_blob, public_key: pemA });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        valid: true,
        errors: [],
        license: { serial: license.serial, product_id: productA.id },
      });
    });

    it.each(['ecdsa-p256', 'rsa-3072'])(
      'verifies a %s license in product_id and public_key modes',
      async (algorithm) => {
        const { product } = await productWithKeyPair(orgA.api, {}, algorithm);
        const issued = await createLicense(orgA.api, { product_id: product.id });
        const pem = (await orgA.api.get(`/api/v1/products/${product.id}/public-key`)).body.public_key;
        await expectErrors({ license_blob: issued.license_blob, product_id: product.id }, []);
        await expectErrors({ license_blob: issued.license_blob, public_key: pem }, []);
      },
    );

    it('reports a perpetual license with valid_until null', async () => {
      const perpetual = await createLicense(orgA.api, { product_id: productA.id, license_type: 'perpetual' });
      const body = await expectErrors({ license_blob: perpetual.license_blob, product_id: productA.id }, []);
      expect(body.license).toMatchObject({ valid_until: null, is_expired: false });
    });

    it('accepts a line-wrapped blob (whitespace is ignored)', async () => {
      const wrapped = license.license_blob.replace(/(.{64})/g, '$1\n');
      await expectErrors({ license_blob: wrapped, product_id: productA.id }, []);
    });

    it('keeps a license verifiable by product_id after the product switches to another key pair', async () => {
      const { product, keyPair } = await productWithKeyPair(orgA.api);
      const issued = await createLicense(orgA.api, { product_id: product.id });
      const next = await orgA.api.post('/api/v1/key-pairs', { name: 'rotated' });
      expect(next.status).toBe(201);
      expect(
        (await orgA.api.put(`/api/v1/products/${product.id}`, { key_pair_id: next.body.id })).status,
      ).toBe(200);
      expect(decodeBlob(issued.license_blob).header.kid).toBe(keyPair.id);
      await expectErrors({ license_blob: issued.license_blob, product_id: product.id }, []);
    });
  });

  describe('request validation', () => {
    it('answers 400 validation_failed on public_key for a public_key that is not a PEM public key', async () => {
      const response = await verify({ license_blob: license.license_blob, public_key: 'garbage' });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({ status: 400, code: 'validation_failed' });
      expect(response.body.errors).toEqual([expect.objectContaining({ field: 'public_key' })]);
    });

    it('answers 400 on public_key for a private key PEM or a truncated public key PEM', async () => {
      const truncated = pemA.replace(/(-----BEGIN PUBLIC KEY-----\r?\n)[A-Za-z0-9+/]{8}/, '$1');
      expect(truncated).not.toBe(pemA);
      for (const publicKey of [ownKey.privateKeyPem, truncated, `${pemA}\n${pemA}`]) {
        const response = await verify({ license_blob: license.license_blob, public_key: publicKey });
        expect(response.status).toBe(400);
        expect(response.body.code).toBe('validation_failed');
        expect(response.body.errors).toEqual([expect.objectContaining({ field: 'public_key' })]);
      }
    });

    it('answers 400 on public_key for a well-formed public key of a type that cannot verify licenses', async () => {
      const unsupported = [
        generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey,
        generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey,
        generateKeyPairSync('x25519').publicKey,
      ].map((key) => key.export({ type: 'spki', format: 'pem' }).toString());
      for (const publicKey of unsupported) {
        const response = await verify({ license_blob: license.license_blob, public_key: publicKey });
        expect(response.status).toBe(400);
        expect(response.body.code).toBe('validation_failed');
        expect(response.body.errors).toEqual([expect.objectContaining({ field: 'public_key' })]);
      }
    });

    it('answers 400 when neither product_id nor public_key is given', async () => {
      const response = await verify({ license_blob: license.license_blob });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('validation_failed');
      const fields = response.body.errors.map((e: { field: string }) => e.field);
      expect(fields.some((f: string) => f === 'product_id' || f === 'public_key')).toBe(true);
    });

    it.each([
      ['a missing license_blob', { product_id: '$A' }, 'license_blob'],
      ['an empty license_blob', { license_blob: '', product_id: '$A' }, 'license_blob'],
      ['a non-string license_blob', { license_blob: 42, product_id: '$A' }, 'license_blob'],
      ['a malformed product_id', { license_blob: '$blob', product_id: 'nope' }, 'product_id'],
      ['a non-string public_key', { license_blob: '$blob', public_key: 42 }, 'public_key'],
      ['an unknown field', { license_blob: '$blob', product_id: '$A', strict: false }, 'strict'],
    ])('answers 400 validation_failed for %s', async (_what, template, field) => {
      const body = Object.fromEntries(
        Object.entries(template).map(([k, v]) => [
          k,
          v === '$A' ? productA.id : v === '$blob' ? license.license_blob : v,
        ]),
      );
      const response = await verify(body);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('validation_failed');
      expect(response.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });

    it('answers 404 for an unknown product_id sent beside public_key', async () => {
      const productId = randomUUID();
      const response = await verify({
        license_blob: license.license_blob,
        public_key: pemA,
        product_id: productId,
      });
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'not_found' });
      expect(response.body.detail).toContain(productId);
    });

    it('answers 404 not_found for an unknown product_id, or one of another organization', async () => {
      for (const productId of [randomUUID(), productB.id]) {
        const response = await verify({ license_blob: license.license_blob, product_id: productId });
        expect(response.status).toBe(404);
        expect(response.body).toMatchObject({ status: 404, code: 'not_found' });
        expect(response.body.detail).toContain(productId);
      }
    });
  });

  describe('malformed', () => {
    const header = segmentOf({ alg: 'EdDSA', typ: 'license+jwt', kid: randomUUID() });
    it.each([
      ['a blob that is not base64', () => '!!! not base64 !!!'],
      ['base64 of "not.a.jws"', () => blobOf('not.a.jws')],
      ['base64 of two segments', () => blobOf(`${header}.${segmentOf({ v: 1 })}`)],
      [
        'base64 of a JWS whose payload is not JSON',
        () => blobOf(`${header}.${Buffer.from('hello, world').toString('base64url')}.c2ln`),
      ],
      [
        'base64 of a JWS whose header is not JSON',
        () => blobOf(`${Buffer.from('{alg').toString('base64url')}.${segmentOf({ v: 1 })}.c2ln`),
      ],
      [
        'base64 of a JWS whose header has no alg',
        () =>
          blobOf(
            `${segmentOf({ typ: 'license+jwt' })}.${segmentOf(decodeBlob(license.license_blob).claims)}.c2ln`,
          ),
      ],
      [
        'base64 of a JWS whose payload is JSON but not license claims',
        () => blobOf(`${header}.${segmentOf({ sub: 'x', admin: true })}.c2ln`),
      ],
      ['base64 of a JWS whose payload is a JSON array', () => blobOf(`${header}.${segmentOf([1, 2])}.c2ln`)],
    ])('answers 200 {valid:false, license:null, errors:[malformed]} for %s', async (_what, blob) => {
      for (const mode of [{ product_id: productA.id }, { public_key: pemA }]) {
        const response = await verify({ license_blob: blob(), ...mode });
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          valid: false,
          license: null,
          errors: [{ code: 'malformed', message: expect.any(String) }],
        });
      }
    });
  });

  describe('signature_invalid', () => {
    it('reports signature_invalid for a blob whose payload was tampered with, and still decodes the summary', async () => {
      const tampered = rewritten(license.license_blob, { claims: { features: ['pro', 'enterprise'] } });
      for (const mode of [{ product_id: productA.id }, { public_key: pemA }]) {
        const body = await expectErrors({ license_blob: tampered, ...mode }, ['signature_invalid']);
        expect(body.license).toMatchObject({
          serial: license.serial,
          features: ['pro', 'enterprise'],
          is_expired: false,
        });
      }
    });

    it('reports signature_invalid for a tampered validity window', async () => {
      const farFuture = Math.floor((Date.now() + 3650 * DAY_MS) / 1000);
      const tampered = rewritten(license.license_blob, {
        claims: { exp: farFuture, valid_until: new Date(farFuture * 1000).toISOString() },
      });
      await expectErrors({ license_blob: tampered, product_id: productA.id }, ['signature_invalid']);
    });

    it('reports signature_invalid for an alg "none" token with the real kid', async () => {
      const unsigned = rewritten(license.license_blob, { header: { alg: 'none' }, signature: '' });
      await expectErrors({ license_blob: unsigned, product_id: productA.id }, ['signature_invalid']);
      await expectErrors({ license_blob: unsigned, public_key: pemA }, ['signature_invalid']);
      const keepingSignature = rewritten(license.license_blob, { header: { alg: 'none' } });
      await expectErrors({ license_blob: keepingSignature, product_id: productA.id }, ['signature_invalid']);
    });

    it('reports signature_invalid for an HS256 token HMAC-ed with the public key PEM', async () => {
      const { header, claims } = decodeBlob(license.license_blob);
      const signingInput = `${segmentOf({ ...header, alg: 'HS256' })}.${segmentOf({ ...claims, features: ['pro', 'enterprise'] })}`;
      for (const secret of [pemA, pemA.trim()]) {
        const mac = createHmac('sha256', secret).update(signingInput).digest('base64url');
        const token = blobOf(`${signingInput}.${mac}`);
        await expectErrors({ license_blob: token, product_id: productA.id }, ['signature_invalid']);
        await expectErrors({ license_blob: token, public_key: pemA }, ['signature_invalid']);
      }
    });

    it("reports signature_invalid for a blob checked against another product's public key", async () => {
      await expectErrors({ license_blob: license.license_blob, public_key: pemA2 }, ['signature_invalid']);
      await expectErrors({ license_blob: license.license_blob, public_key: ownKey.publicKeyPem }, [
        'signature_invalid',
      ]);
    });

    it('reports signature_invalid for a header alg of another family than the key (ES256 on an Ed25519 key)', async () => {
      const confused = rewritten(license.license_blob, { header: { alg: 'ES256' } });
      await expectErrors({ license_blob: confused, product_id: productA.id }, ['signature_invalid']);
    });

    it("reports signature_invalid for a token signed with our own key but naming the product's kid", async () => {
      const { header, claims } = decodeBlob(license.license_blob);
      const resigned = signJws(
        { ...claims, features: ['enterprise'] },
        { kid: header.kid, privateKey: parsePrivateKey(ownKey.privateKeyPem) },
      );
      await expectErrors({ license_blob: blobFromJws(resigned), product_id: productA.id }, [
        'signature_invalid',
      ]);
    });
  });

  describe('unknown_key', () => {
    it('reports unknown_key in product_id mode when the kid is a random uuid, not a uuid, or absent', async () => {
      for (const header of [{ kid: randomUUID() }, { kid: 'signing-key-1' }, { kid: 7 }]) {
        const blob = rewritten(license.license_blob, { header });
        await expectErrors({ license_blob: blob, product_id: productA.id }, ['unknown_key']);
      }
      const { header, segments } = decodeBlob(license.license_blob);
      const { kid: _kid, ...withoutKid } = header;
      const noKid = blobOf(`${segmentOf(withoutKid)}.${segments[1]}.${segments[2]}`);
      await expectErrors({ license_blob: noKid, product_id: productA.id }, ['unknown_key']);
    });

    it("reports unknown_key in product_id mode when the kid is another organization's key pair", async () => {
      const blob = rewritten(license.license_blob, { header: { kid: keyPairB.id } });
      await expectErrors({ license_blob: blob, product_id: productA.id }, ['unknown_key']);

      const theirs = await createLicense(orgB.api, { product_id: productB.id });
      expect(decodeBlob(theirs.license_blob).header.kid).toBe(keyPairB.id);
      const body = await expectErrors({ license_blob: theirs.license_blob, product_id: productA.id }, [
        'unknown_key',
        'product_mismatch',
      ]);
      expect(body.license).toMatchObject({ serial: theirs.serial, product_id: productB.id });
      // Org B itself verifies it fine.
      await expectErrors({ license_blob: theirs.license_blob, product_id: productB.id }, [], orgB.api);
    });

    it('reports signature_invalid, not unknown_key, for a kid naming another key pair of the same organization', async () => {
      // The kid names a key pair of the organization, so that key is used: the signature then fails.
      const { keyPair } = await productWithKeyPair(orgA.api);
      const blob = rewritten(license.license_blob, { header: { kid: keyPair.id } });
      await expectErrors({ license_blob: blob, product_id: productA.id }, ['signature_invalid']);
      expect(keyPairA.id).toBe(decodeBlob(license.license_blob).header.kid);
    });
  });

  describe('product_mismatch', () => {
    it('reports product_mismatch for a valid blob of product A verified with product B of the same organization', async () => {
      const body = await expectErrors({ license_blob: license.license_blob, product_id: productA2.id }, [
        'product_mismatch',
      ]);
      expect(body.license).toMatchObject({
        serial: license.serial,
        product_id: productA.id,
        is_expired: false,
      });
    });

    it('compares a product_id sent beside public_key with the payload only', async () => {
      await expectErrors(
        { license_blob: license.license_blob, public_key: pemA, product_id: productA.id },
        [],
      );
      await expectErrors({ license_blob: license.license_blob, public_key: pemA, product_id: productA2.id }, [
        'product_mismatch',
      ]);
    });
  });

  describe('validity in time', () => {
    it('reports expired with is_expired true when the stored valid_until has passed, though the signed exp has not', async () => {
      const issued = await createLicense(orgA.api, { product_id: productA.id });
      await expectErrors({ license_blob: issued.license_blob, product_id: productA.id }, []);
      await expireLicenseInDatabase(issued.id);
      await stack.forgetCachedSerials(orgA.id, issued.serial);

      const body = await expectErrors({ license_blob: issued.license_blob, product_id: productA.id }, [
        'expired',
      ]);
      expect(body.license).toMatchObject({
        serial: issued.serial,
        is_expired: true,
        valid_until: issued.valid_until,
      });
      // Stored state of the caller's own license applies in public_key mode too.
      const byKey = await expectErrors({ license_blob: issued.license_blob, public_key: pemA }, ['expired']);
      expect(byKey.license.is_expired).toBe(true);
      // Another organization learns nothing about it.
      const foreign = await expectErrors(
        { license_blob: issued.license_blob, public_key: pemA },
        [],
        orgB.api,
      );
      expect(foreign.license.is_expired).toBe(false);
    });

    it('answers valid for a well-formed token signed with our own key in public_key mode (the control case)', async () => {
      const { blob } = forgedBlob(new Date(Date.now() - DAY_MS), new Date(Date.now() + DAY_MS));
      await expectErrors({ license_blob: blob, public_key: ownKey.publicKeyPem }, []);
    });

    it('reports exactly not_yet_valid for a token whose nbf is in the future', async () => {
      const validFrom = new Date(Date.now() + DAY_MS);
      const { blob, serial } = forgedBlob(validFrom, new Date(validFrom.getTime() + 30 * DAY_MS));
      const body = await expectErrors({ license_blob: blob, public_key: ownKey.publicKeyPem }, [
        'not_yet_valid',
      ]);
      expect(body.license).toMatchObject({ serial, valid_from: validFrom.toISOString(), is_expired: false });
    });

    it('reports exactly expired, with is_expired true, for a token whose signed exp has passed', async () => {
      const { blob } = forgedBlob(new Date(Date.now() - 30 * DAY_MS), new Date(Date.now() - DAY_MS));
      const body = await expectErrors({ license_blob: blob, public_key: ownKey.publicKeyPem }, ['expired']);
      expect(body.license.is_expired).toBe(true);
    });

    it('reports every problem that applies at once', async () => {
      const validFrom = new Date(Date.now() + DAY_MS);
      const { blob } = forgedBlob(validFrom, new Date(validFrom.getTime() + DAY_MS));
      await expectErrors({ license_blob: blob, public_key: pemA, product_id: productA.id }, [
        'signature_invalid',
        'product_mismatch',
        'not_yet_valid',
      ]);
    });
  });

  describe('stored status', () => {
    it("never reveals another organization's revocation: org B stays valid in public_key mode while org A sees revoked", async () => {
      const issued = await createLicense(orgA.api, { product_id: productA.id });
      await expectErrors({ license_blob: issued.license_blob, public_key: pemA }, [], orgB.api);

      expect((await orgA.api.delete(`/api/v1/licenses/${issued.id}`)).status).toBe(200);

      const foreign = await expectErrors(
        { license_blob: issued.license_blob, public_key: pemA },
        [],
        orgB.api,
      );
      expect(foreign.license).toMatchObject({ serial: issued.serial, is_expired: false });
      await expectErrors({ license_blob: issued.license_blob, product_id: productA.id }, ['revoked']);
      await expectErrors({ license_blob: issued.license_blob, public_key: pemA }, ['revoked']);
    });

    it('reports suspended for a license stored as suspended', async () => {
      const issued = await createLicense(orgA.api, { product_id: productA.id });
      await sql(`UPDATE license.licenses SET status = 'suspended' WHERE id = $1`, [issued.id]);
      await stack.forgetCachedSerials(orgA.id, issued.serial);
      await expectErrors({ license_blob: issued.license_blob, product_id: productA.id }, ['suspended']);
      await expectErrors({ license_blob: issued.license_blob, public_key: pemA }, [], orgB.api);
    });

    it('reports revoked alongside other problems (revoked and tampered)', async () => {
      const issued = await createLicense(orgA.api, { product_id: productA.id });
      expect((await orgA.api.delete(`/api/v1/licenses/${issued.id}`)).status).toBe(200);
      const tampered = rewritten(issued.license_blob, { claims: { features: ['enterprise'] } });
      await expectErrors({ license_blob: tampered, product_id: productA.id }, [
        'signature_invalid',
        'revoked',
      ]);
    });

    it('sees a suspension, a reinstatement and a revocation the moment each answer returns, with the cache warm', async () => {
      const issued = await createLicense(orgA.api, { product_id: productA.id });
      const body = { license_blob: issued.license_blob, product_id: productA.id };
      await expectErrors(body, []);
      await expectErrors(body, []); // answered from the cache now

      const patch = (status: string) => orgA.api.patch(`/api/v1/licenses/${issued.id}`, { status });
      expect((await patch('suspended')).status).toBe(200);
      await expectErrors(body, ['suspended']);
      expect((await patch('active')).status).toBe(200);
      await expectErrors(body, []);
      expect((await orgA.api.delete(`/api/v1/licenses/${issued.id}`)).status).toBe(200);
      await expectErrors(body, ['revoked']);
      await expectErrors({ license_blob: issued.license_blob, public_key: pemA }, ['revoked']);
    });

    it('answers a known license from the cache without reading PostgreSQL', async () => {
      const issued = await createLicense(orgA.api, { product_id: productA.id });
      const body = { license_blob: issued.license_blob, product_id: productA.id };
      await expectErrors(body, []);
      expect((await orgA.api.delete(`/api/v1/licenses/${issued.id}`)).status).toBe(200);

      // With the licenses and the catalog locked against every read, only an answer that never
      // reaches PostgreSQL comes back (a read would wait for the lock until the bus times out).
      const locker = new Client({ connectionString: TEST_DATABASE_URL });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE license.licenses, license.catalog_products IN ACCESS EXCLUSIVE MODE');
        await expectErrors(body, ['revoked']);
        await expectErrors({ license_blob: issued.license_blob, public_key: pemA }, ['revoked']);
      } finally {
        await locker.query('ROLLBACK');
        await locker.end();
      }
    });

    it('does not let a cached license of org A answer for org B, or prove a product of another organization', async () => {
      const issued = await createLicense(orgA.api, { product_id: productA.id });
      expect((await orgA.api.delete(`/api/v1/licenses/${issued.id}`)).status).toBe(200);
      await expectErrors({ license_blob: issued.license_blob, product_id: productA.id }, ['revoked']);

      // Org B naming org A's product: still 404, though the cache holds a license of it.
      const foreignProduct = await verify(
        { license_blob: issued.license_blob, product_id: productA.id },
        orgB.api,
      );
      expect(foreignProduct.status).toBe(404);
      // Org B's own product: product_mismatch and unknown_key, never org A's revocation.
      await expectErrors(
        { license_blob: issued.license_blob, product_id: productB.id },
        ['unknown_key', 'product_mismatch'],
        orgB.api,
      );
    });
  });
});
