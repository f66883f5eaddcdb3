import {
  constants,
  createHmac,
  createPublicKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  buildCheckoutClaims,
  buildClaims,
  generateKeyPair,
  jwsAlgorithmFor,
  KEY_ALGORITHMS,
  LICENSE_TYPES,
  parsePrivateKey,
  readLicenseClaims as serviceReadLicenseClaims,
  signJws,
  type KeyAlgorithm,
  type LicenseClaims,
} from '@licensing/license-format';
import { LICENSE_TYPES as SDK_LICENSE_TYPES, readLicenseClaims } from './claims';
import { base64, base64url, fromBase64, fromBase64url } from './encoding';
import { decodeLicense, importPublicKey, InvalidPublicKeyError, licenseBlobOf, verifyLicense } from './index';

// Licenses signed here with the service's own signing code (libs/license-format); the suites in
// apps/gateway-e2e check the same against files the running service issued.

const NOW = Date.parse('2027-03-01T12:00:00Z');
const DAY = 86_400_000;

interface Key {
  pem: string;
  jwk: Record<string, unknown>;
  privateKey: KeyObject;
}

const b64 = (value: string | Buffer): string => Buffer.from(value).toString('base64url');
const codes = (result: { errors: { code: string }[] }): string[] => result.errors.map((e) => e.code);

function claims(overrides: Partial<Parameters<typeof buildClaims>[0]> = {}): LicenseClaims {
  return buildClaims(licenseInput(overrides));
}

function licenseInput(
  overrides: Partial<Parameters<typeof buildClaims>[0]> = {},
): Parameters<typeof buildClaims>[0] {
  return {
    licenseId: '4b0c5d0e-8a43-4a8b-9d0b-2f8f3c1e6a11',
    serial: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC',
    orgId: '0d8f2c64-3f55-4b7e-a0d4-6d7b8a9c0e12',
    productId: '9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d',
    productCode: 'photo-editor',
    licenseType: 'subscription',
    customerId: 'cus_42',
    customerEmail: 'ada@example.com',
    features: ['pro'],
    maxSeats: 1,
    hardwareBinding: null,
    validFrom: new Date(NOW - DAY),
    validUntil: new Date(NOW + 30 * DAY),
    issuedAt: new Date(NOW - DAY),
    ...overrides,
  };
}

function signRaw(header: object, payload: object, algorithm: KeyAlgorithm, key: KeyObject): string {
  const input = `${b64(JSON.stringify(header))}.${b64(JSON.stringify(payload))}`;
  const data = Buffer.from(input);
  const signature =
    algorithm === 'ed25519'
      ? sign(null, data, key)
      : algorithm === 'ecdsa-p256'
        ? sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' })
        : sign('sha256', data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
  return `${input}.${b64(signature)}`;
}

describe('verifyLicense', () => {
  const keys = {} as Record<KeyAlgorithm, Key>;
  const other = {} as Record<KeyAlgorithm, Key>;

  beforeAll(async () => {
    for (const algorithm of KEY_ALGORITHMS) {
      for (const target of [keys, other]) {
        const pair = await generateKeyPair(algorithm);
        target[algorithm] = {
          pem: pair.publicKeyPem,
          jwk: createPublicKey(pair.publicKeyPem).export({ format: 'jwk' }) as Record<string, unknown>,
          privateKey: parsePrivateKey(pair.privateKeyPem),
        };
      }
    }
  });

  describe.each(KEY_ALGORITHMS)('%s', (algorithm) => {
    const kid = 'a3c1c1e4-1d5e-4f44-9a4b-8f7b7c2b1a10';
    const token = () => signJws(claims(), { kid, privateKey: keys[algorithm].privateKey });
    const verify = (
      input: Parameters<typeof verifyLicense>[0],
      key: unknown = keys[algorithm].pem,
      options = {},
    ) => verifyLicense(input, key as string, { now: NOW, ...options });

    it('accepts a license as file text, as bytes, as an ArrayBuffer and as a license_blob, with the PEM or the JWK', async () => {
      const jws = token();
      const bytes = new TextEncoder().encode(`${jws}\n`);
      for (const input of [
        jws,
        bytes,
        bytes.buffer,
        licenseBlobOf(jws),
        Buffer.from(jws).toString('base64'),
      ]) {
        expect(await verify(input)).toMatchObject({ valid: true, errors: [] });
      }
      expect(await verify(jws, keys[algorithm].jwk)).toMatchObject({ valid: true, errors: [] });
      expect(
        await verify(jws, { ...keys[algorithm].jwk, kid, alg: jwsAlgorithmFor(algorithm) }),
      ).toMatchObject({
        valid: true,
      });
    });

    it('decodes the license into the summary', async () => {
      const { license } = await verify(token());
      expect(license).toMatchObject({
        license_id: '4b0c5d0e-8a43-4a8b-9d0b-2f8f3c1e6a11',
        serial: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC',
        product_code: 'photo-editor',
        features: ['pro'],
        key_id: kid,
        algorithm: jwsAlgorithmFor(algorithm),
        is_expired: false,
        valid_until: new Date(NOW + 30 * DAY).toISOString(),
      });
    });

    it('exposes the entitlements the file carries, and none for a file without the claim', async () => {
      expect((await verify(token())).license?.entitlements).toEqual([]);
      const entitled = signJws(claims({ entitlements: ['cloud-sync', 'export.pdf'] }), {
        kid,
        privateKey: keys[algorithm].privateKey,
      });
      const { valid, license } = await verify(entitled);
      expect(valid).toBe(true);
      expect(license?.entitlements).toEqual(['cloud-sync', 'export.pdf']);
    });

    it('refuses another key of the same type, and keys of the other types', async () => {
      expect(codes(await verify(token(), other[algorithm].pem))).toEqual(['signature_invalid']);
      for (const different of KEY_ALGORITHMS.filter((a) => a !== algorithm)) {
        expect(codes(await verify(token(), keys[different].pem))).toEqual(['signature_invalid']);
      }
    });

    it('refuses a payload or header changed under the genuine signature', async () => {
      const [header, payload, signature] = token().split('.') as [string, string, string];
      const upgraded = b64(
        Buffer.from(payload, 'base64url').toString().replace('["pro"]', '["pro","enterprise"]'),
      );
      expect(codes(await verify(`${header}.${upgraded}.${signature}`))).toEqual(['signature_invalid']);
      const rekeyed = b64(Buffer.from(header, 'base64url').toString().replace(kid, kid.replace('a3', 'b4')));
      expect(codes(await verify(`${rekeyed}.${payload}.${signature}`))).toEqual(['signature_invalid']);
    });

    it('refuses alg none, HS256 keyed with the public key, and any alg other than the key’s', async () => {
      const [header, payload, signature] = token().split('.') as [string, string, string];
      const decodedHeader = JSON.parse(Buffer.from(header, 'base64url').toString()) as object;
      const withAlg = (alg: string) => b64(JSON.stringify({ ...decodedHeader, alg }));
      expect(codes(await verify(`${withAlg('none')}.${payload}.`))).toEqual(['signature_invalid']);
      for (const secret of [
        keys[algorithm].pem,
        createPublicKey(keys[algorithm].pem).export({ type: 'spki', format: 'der' }),
      ]) {
        const input = `${withAlg('HS256')}.${payload}`;
        const mac = createHmac('sha256', secret).update(input).digest('base64url');
        expect(codes(await verify(`${input}.${mac}`))).toEqual(['signature_invalid']);
      }
      for (const alg of ['RS256', 'PS384', 'ES384', 'ES256', 'PS256', 'EdDSA'].filter(
        (a) => a !== jwsAlgorithmFor(algorithm),
      )) {
        expect(codes(await verify(`${withAlg(alg)}.${payload}.${signature}`))).toEqual(['signature_invalid']);
      }
    });

    it('refuses a crit header even under a valid signature', async () => {
      const jws = signRaw(
        { alg: jwsAlgorithmFor(algorithm), typ: 'license+jwt', kid, crit: ['exp'], exp: 1 },
        claims(),
        algorithm,
        keys[algorithm].privateKey,
      );
      expect(codes(await verify(jws))).toEqual(['signature_invalid']);
    });

    it('reports product, time and fingerprint problems, all that apply, in the documented order', async () => {
      const bound = signJws(
        claims({ licenseType: 'node_locked', hardwareBinding: { fingerprint: 'machine-a' } }),
        { kid, privateKey: keys[algorithm].privateKey },
      );
      expect(
        codes(await verify(bound, undefined, { fingerprint: 'machine-a', productId: claims().product_id })),
      ).toEqual([]);
      expect(codes(await verify(bound, undefined, { fingerprint: 'machine-b' }))).toEqual([
        'fingerprint_mismatch',
      ]);
      expect(codes(await verify(token(), undefined, { fingerprint: 'any' }))).toEqual([]);
      expect(codes(await verify(token(), undefined, { productId: 'another' }))).toEqual(['product_mismatch']);
      expect(codes(await verify(token(), undefined, { now: NOW + 31 * DAY }))).toEqual(['expired']);
      expect(codes(await verify(token(), undefined, { now: NOW - 2 * DAY }))).toEqual(['not_yet_valid']);
      expect(
        codes(
          await verify(bound, other[algorithm].pem, {
            now: NOW + 31 * DAY,
            productId: 'x',
            fingerprint: 'y',
          }),
        ),
      ).toEqual(['signature_invalid', 'product_mismatch', 'expired', 'fingerprint_mismatch']);
    });

    it('uses the JWK kid: a key set picks the license’s key, a key pair it does not hold is unknown_key', async () => {
      const jws = token();
      const set = {
        keys: [
          { ...other[algorithm].jwk, kid: 'old' },
          { ...keys[algorithm].jwk, kid },
        ],
      };
      expect(await verify(jws, set)).toMatchObject({ valid: true });
      expect(codes(await verify(jws, { keys: [{ ...keys[algorithm].jwk, kid: 'old' }] }))).toEqual([
        'unknown_key',
      ]);
      const imported = await Promise.all([
        importPublicKey(other[algorithm].pem),
        importPublicKey(keys[algorithm].pem),
      ]);
      expect(await verify(jws, imported)).toMatchObject({ valid: true });
    });
  });

  describe('time boundaries and clock tolerance', () => {
    const nbf = Math.floor((NOW - DAY) / 1000);
    const exp = Math.floor((NOW + 30 * DAY) / 1000);
    const at = async (ms: number, clockToleranceSeconds?: number) =>
      codes(
        await verifyLicense(
          signJws(claims(), { kid: 'k', privateKey: keys.ed25519.privateKey }),
          keys.ed25519.pem,
          {
            now: ms,
            clockToleranceSeconds,
          },
        ),
      );

    it('is valid from the nbf second and expired from the exp second, as the service decides', async () => {
      expect(await at(nbf * 1000)).toEqual([]);
      expect(await at(nbf * 1000 - 1)).toEqual(['not_yet_valid']);
      expect(await at(exp * 1000 - 1)).toEqual([]);
      expect(await at(exp * 1000)).toEqual(['expired']);
    });

    it('widens both ends by the tolerance', async () => {
      expect(await at(nbf * 1000 - 60_000, 60)).toEqual([]);
      expect(await at(nbf * 1000 - 60_001, 60)).toEqual(['not_yet_valid']);
      expect(await at(exp * 1000 + 59_999, 60)).toEqual([]);
      expect(await at(exp * 1000 + 60_000, 60)).toEqual(['expired']);
    });

    it('never expires a perpetual license', async () => {
      const jws = signJws(claims({ licenseType: 'perpetual', validUntil: null }), {
        kid: 'k',
        privateKey: keys.ed25519.privateKey,
      });
      expect(await verifyLicense(jws, keys.ed25519.pem, { now: NOW + 100 * 365 * DAY })).toMatchObject({
        valid: true,
      });
    });
  });

  describe('checkout files', () => {
    const fileExp = NOW + 7 * DAY;
    const checkout = (
      fingerprint?: string,
      extra: Parameters<typeof buildCheckoutClaims>[2] = {},
      license: Partial<Parameters<typeof buildClaims>[0]> = {},
    ) =>
      signJws(
        buildCheckoutClaims(
          licenseInput({ entitlements: ['cloud-sync'], ...license }),
          { expiresAt: new Date(fileExp), fingerprint },
          extra,
        ),
        { kid: 'k', privateKey: keys.ed25519.privateKey },
      );
    const at = async (jws: string, ms: number, options: Parameters<typeof verifyLicense>[2] = {}) =>
      verifyLicense(jws, keys.ed25519.pem, { now: ms, ...options });

    it('exposes issued_at, expires_at, entitlements and the fingerprint, and no policy when absent', async () => {
      const { valid, license } = await at(checkout('machine-a'), NOW);
      expect(valid).toBe(true);
      expect(license).toMatchObject({
        issued_at: new Date(NOW - DAY).toISOString(),
        expires_at: new Date(Math.floor(fileExp / 1000) * 1000).toISOString(),
        valid_until: new Date(NOW + 30 * DAY).toISOString(),
        entitlements: ['cloud-sync'],
        fingerprint: 'machine-a',
        is_expired: false,
        is_file_expired: false,
      });
      expect(license).not.toHaveProperty('policy');
    });

    it('exposes the policy limits when the file carries them', async () => {
      const policy = { id: 'p-1', max_machines: 3, max_processes: null, uses_reset: 'day', overage: '1.5x' };
      expect((await at(checkout(undefined, { policy }), NOW)).license?.policy).toEqual(policy);
    });

    it('rejects a file past its exp with file_expired while the license is still valid', async () => {
      const expSecond = Math.floor(fileExp / 1000) * 1000;
      expect(codes(await at(checkout(), expSecond - 1))).toEqual([]);
      const past = await at(checkout(), expSecond);
      expect(codes(past)).toEqual(['file_expired']);
      expect(past.license).toMatchObject({ is_expired: false, is_file_expired: true });
    });

    it('applies the clock tolerance to the file expiry too', async () => {
      const expSecond = Math.floor(fileExp / 1000) * 1000;
      expect(codes(await at(checkout(), expSecond + 59_999, { clockToleranceSeconds: 60 }))).toEqual([]);
      expect(codes(await at(checkout(), expSecond + 60_000, { clockToleranceSeconds: 60 }))).toEqual([
        'file_expired',
      ]);
    });

    it('reports expired too once the license has ended', async () => {
      expect(codes(await at(checkout(), NOW + 31 * DAY))).toEqual(['expired', 'file_expired']);
    });

    it('rejects a perpetual license file past its exp', async () => {
      const jws = checkout(undefined, {}, { licenseType: 'perpetual', validUntil: null });
      expect(codes(await at(jws, fileExp))).toEqual(['file_expired']);
    });

    it("refuses an activation's file on another machine, and accepts it on its own", async () => {
      expect(codes(await at(checkout('machine-a'), NOW, { fingerprint: 'machine-b' }))).toEqual([
        'fingerprint_mismatch',
      ]);
      expect(codes(await at(checkout('machine-a'), NOW, { fingerprint: 'machine-a' }))).toEqual([]);
    });
  });

  describe('malformed input', () => {
    it.each([
      ['an empty string', ''],
      ['two segments', 'a.b'],
      ['four segments', 'eyJ9.eyJ9.c2ln.AAAA'],
      ['garbage after the signature', 'GENUINE <garbage>'],
      ['a base64 blob that does not hold a JWS', Buffer.from('hello').toString('base64')],
      ['bytes that are not UTF-8', new Uint8Array([0xff, 0xfe, 0x2e])],
      ['a header of another typ', 'TYP:JWT'],
      ['a header without typ', 'TYP:'],
      ['a payload that is not license claims', 'PAYLOAD'],
      ['standard base64 in a segment', 'STANDARD'],
    ])('refuses %s as malformed, with no license', async (_name, input) => {
      const genuine = signJws(claims(), { kid: 'k', privateKey: keys.ed25519.privateKey });
      const [h, p, s] = genuine.split('.') as [string, string, string];
      const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>;
      let value: string | Uint8Array = input;
      if (input === 'GENUINE <garbage>') value = `${genuine} <garbage>`;
      if (input === 'TYP:JWT') value = `${b64(JSON.stringify({ ...header, typ: 'JWT' }))}.${p}.${s}`;
      if (input === 'TYP:') value = `${b64(JSON.stringify({ ...header, typ: undefined }))}.${p}.${s}`;
      if (input === 'PAYLOAD') value = `${h}.${b64(JSON.stringify({ sub: 'x' }))}.${s}`;
      if (input === 'STANDARD') value = `${h}.${p}.${Buffer.from(s, 'base64url').toString('base64')}`;
      const result = await verifyLicense(value, keys.ed25519.pem);
      expect(result).toEqual({
        valid: false,
        license: null,
        errors: [{ code: 'malformed', message: expect.any(String) }],
      });
    });

    it('decodeLicense reads a file without verifying it, and answers undefined for junk', () => {
      const jws = signJws(claims(), { kid: 'k', privateKey: keys.ed25519.privateKey });
      expect(decodeLicense(jws)?.serial).toBe('LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC');
      expect(decodeLicense('junk')).toBeUndefined();
    });
  });

  describe('public keys', () => {
    it.each([
      [
        'a private key PEM',
        () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }),
      ],
      ['a private JWK', () => generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })],
      ['an HMAC secret JWK', () => ({ kty: 'oct', k: 'c2VjcmV0' })],
      [
        'a P-384 key',
        () =>
          generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({
            type: 'spki',
            format: 'pem',
          }),
      ],
      [
        'a 1024-bit RSA key',
        () =>
          generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
            type: 'spki',
            format: 'pem',
          }),
      ],
      [
        'an X25519 key',
        () => generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' }),
      ],
      [
        'a PKCS#1 RSA key',
        () =>
          generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({
            type: 'pkcs1',
            format: 'pem',
          }),
      ],
      [
        'a JWK whose alg is not the key’s',
        () => ({ ...generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }), alg: 'HS256' }),
      ],
      ['text that is not a key', () => 'hello'],
    ])('refuses %s with InvalidPublicKeyError', async (_name, make) => {
      await expect(verifyLicense('a.b.c', make() as string)).rejects.toBeInstanceOf(InvalidPublicKeyError);
    });
  });
});

describe('building blocks', () => {
  it('base64 and base64url encode as Buffer does and decode only canonical text', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70 }), (bytes) => {
        const url = Buffer.from(bytes).toString('base64url');
        const standard = Buffer.from(bytes).toString('base64');
        expect(base64url(bytes)).toBe(url);
        expect(base64(bytes)).toBe(standard);
        expect(Buffer.from(fromBase64url(url)!)).toEqual(Buffer.from(bytes));
        if (bytes.length > 0) expect(Buffer.from(fromBase64(standard)!)).toEqual(Buffer.from(bytes));
      }),
    );
    expect(fromBase64url('YWIuYx')).toBeUndefined(); // non-zero padding bits
    expect(fromBase64url('YW+u')).toBeUndefined();
    expect(fromBase64('YWIuYw')).toBeUndefined();
    expect(fromBase64('YWIu-_==')).toBeUndefined();
  });

  it('knows exactly the license types the service issues', () => {
    expect([...SDK_LICENSE_TYPES]).toEqual([...LICENSE_TYPES]);
  });

  it('accepts exactly the payloads the service accepts as license claims', () => {
    const valid = JSON.parse(JSON.stringify(claims())) as Record<string, unknown>;
    const variants = fc.record({
      field: fc.constantFrom(...Object.keys(valid), 'exp', 'entitlements', 'fingerprint', 'policy'),
      value: fc.oneof(
        fc.constant(undefined),
        fc.constant(null),
        fc.integer(),
        fc.double(),
        fc.string(),
        fc.array(fc.string()),
        fc.array(fc.oneof(fc.string(), fc.integer())),
        fc.constant({ fingerprint: 'x' }),
        fc.constant({ max_machines: 3, overage: 'none' }),
        fc.constant({ max_machines: '3' }),
        fc.constant({ id: 7 }),
      ),
    });
    fc.assert(
      fc.property(variants, ({ field, value }) => {
        const payload = { ...valid, [field]: value };
        expect(readLicenseClaims(payload) === undefined).toBe(
          serviceReadLicenseClaims(payload) === undefined,
        );
      }),
    );
  });

  it('imports nothing: no node: modules and no packages, so it runs in every runtime', () => {
    const dir = __dirname;
    for (const file of readdirSync(dir).filter(
      (name) => name.endsWith('.ts') && !/\.(int-)?spec\.ts$/.test(name),
    )) {
      const source = readFileSync(join(dir, file), 'utf8');
      const specifiers = [
        ...source.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+['"]([^'"]+)['"]/gm),
        ...source.matchAll(/\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]/g),
      ].map((m) => m[1]!);
      expect({ file, imports: specifiers.filter((s) => !s.startsWith('./')) }).toEqual({ file, imports: [] });
      expect(source).not.toMatch(/\b(process|Buffer|require)\b[.(]/);
    }
  });
});
