import { execFile } from 'node:child_process';
import { constants, createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { buildClaims, type LicenseClaims } from './claims';
import { decodeJws, MalformedJwsError, signJws, verifyJwsSignature } from './jws';
import {
  generateKeyPair,
  InvalidKeyError,
  KEY_ALGORITHMS,
  UnsupportedKeyError,
  parsePrivateKey,
  parsePublicKey,
  type KeyAlgorithm,
} from './keys';

interface TestKey {
  kid: string;
  publicKey: KeyObject;
  privateKey: KeyObject;
  publicKeyPem: string;
}

const JWS_ALG: Record<KeyAlgorithm, string> = {
  ed25519: 'EdDSA',
  'ecdsa-p256': 'ES256',
  'rsa-3072': 'PS256',
};
const OTHER_ALG: Record<KeyAlgorithm, string> = {
  ed25519: 'ES256',
  'ecdsa-p256': 'PS256',
  'rsa-3072': 'EdDSA',
};

const b64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');
const json = (value: unknown): string => b64url(JSON.stringify(value));

async function testKey(algorithm: KeyAlgorithm, kid: string): Promise<TestKey> {
  const pair = await generateKeyPair(algorithm);
  return {
    kid,
    publicKey: parsePublicKey(pair.publicKeyPem),
    privateKey: parsePrivateKey(pair.privateKeyPem),
    publicKeyPem: pair.publicKeyPem,
  };
}

function claimsFor(now: Date): LicenseClaims {
  return buildClaims({
    licenseId: '4b0c5d0e-8a43-4a8b-9d0b-2f8f3c1e6a11',
    serial: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC',
    orgId: '0d8f2c64-3f55-4b7e-a0d4-6d7b8a9c0e12',
    productId: '9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d',
    productCode: 'photo-editor',
    licenseType: 'subscription',
    customerId: null,
    customerEmail: 'ada@example.com',
    features: ['pro', 'export'],
    maxSeats: 1,
    hardwareBinding: null,
    validFrom: new Date(now.getTime() - 60_000),
    validUntil: new Date(now.getTime() + 365 * 86_400_000),
    issuedAt: now,
  });
}

function verifies(token: string, publicKey: KeyObject): boolean {
  return verifyJwsSignature(decodeJws(token), publicKey);
}

/** Signs an arbitrary header with the key's own primitive, bypassing signJws's choice of alg. */
function signRaw(header: object, payload: object, algorithm: KeyAlgorithm, privateKey: KeyObject): string {
  const input = `${json(header)}.${json(payload)}`;
  const data = Buffer.from(input);
  const signature =
    algorithm === 'ed25519'
      ? sign(null, data, privateKey)
      : algorithm === 'ecdsa-p256'
        ? sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' })
        : sign('sha256', data, { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
  return `${input}.${b64url(signature)}`;
}

interface JoseResult {
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
  error?: string;
  wrongAlgError?: string;
}

// jose v6 is ESM-only, and under this CommonJS jest setup neither require(), import() nor
// new Function('return import(s)') can load it (no --experimental-vm-modules). A real Node
// process has no such limit, so jose runs there, exactly as a customer would run it.
const JOSE_SCRIPT = `
import { compactVerify, importSPKI, jwtVerify } from 'jose';
const { token, pem, alg, otherAlg } = JSON.parse(process.argv[1]);
const key = await importSPKI(pem, alg);
const result = {};
try {
  result.header = (await compactVerify(token, key, { algorithms: [alg] })).protectedHeader;
  result.claims = (await jwtVerify(token, key, { algorithms: [alg], typ: 'license+jwt' })).payload;
} catch (error) {
  result.error = String(error.code ?? error);
}
try {
  await compactVerify(token, key, { algorithms: [otherAlg] });
} catch (error) {
  result.wrongAlgError = String(error.code ?? error);
}
process.stdout.write(JSON.stringify(result));
`;

async function verifyWithJose(
  token: string,
  pem: string,
  alg: string,
  otherAlg: string,
): Promise<JoseResult> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', JOSE_SCRIPT, JSON.stringify({ token, pem, alg, otherAlg })],
    { cwd: __dirname },
  );
  return JSON.parse(stdout) as JoseResult;
}

describe('license JWS', () => {
  const keys = {} as Record<KeyAlgorithm, TestKey>;
  const now = new Date();
  const claims = claimsFor(now);

  beforeAll(async () => {
    for (const algorithm of KEY_ALGORITHMS) {
      keys[algorithm] = await testKey(algorithm, `kid-${algorithm}`);
    }
  });

  describe.each(KEY_ALGORITHMS)('signed with %s', (algorithm) => {
    let key: TestKey;
    let token: string;

    beforeAll(() => {
      key = keys[algorithm];
      token = signJws(claims, key);
    });

    it(`writes the header exactly as {alg: ${JWS_ALG[algorithm]}, typ: license+jwt, kid}`, () => {
      const headerJson = Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8');
      expect(headerJson).toBe(JSON.stringify({ alg: JWS_ALG[algorithm], typ: 'license+jwt', kid: key.kid }));
    });

    it('decodes back to the signed claims', () => {
      expect(decodeJws<LicenseClaims>(token).payload).toEqual(claims);
    });

    it('verifies with its own public key', () => {
      expect(verifies(token, key.publicKey)).toBe(true);
    });

    it('does not verify with another key', () => {
      const other = keys[algorithm === 'ed25519' ? 'ecdsa-p256' : 'ed25519'];
      expect(verifies(token, other.publicKey)).toBe(false);
    });

    it(`verifies with jose pinned to ${JWS_ALG[algorithm]}, whose jwtVerify reads the claims`, async () => {
      const result = await verifyWithJose(token, key.publicKeyPem, JWS_ALG[algorithm], OTHER_ALG[algorithm]);
      expect(result.error).toBeUndefined();
      expect(result.header).toEqual({ alg: JWS_ALG[algorithm], typ: 'license+jwt', kid: key.kid });
      expect(result.claims).toEqual(claims);
      // Proves jose really honours `algorithms`, so the positive result above means something.
      expect(result.wrongAlgError).toBe('ERR_JOSE_ALG_NOT_ALLOWED');
    });

    it('rejects a token with one payload character changed', () => {
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const text = Buffer.from(payload, 'base64url').toString('utf8');
      const tampered = text.replace('"max_seats":1', '"max_seats":9');
      expect(tampered).not.toBe(text);
      expect(verifies(`${header}.${b64url(tampered)}.${signature}`, key.publicKey)).toBe(false);
    });

    it.each([
      ['kid', { kid: 'kid-someone-else' }],
      ['typ', { typ: 'JWT' }],
    ])('rejects a token with the header %s changed', (_field, change) => {
      const [, payload, signature] = token.split('.') as [string, string, string];
      const header = { ...decodeJws(token).header, ...change };
      expect(verifies(`${json(header)}.${payload}.${signature}`, key.publicKey)).toBe(false);
    });

    it.each(['first', 'middle', 'last'] as const)(
      'rejects a token with the %s signature byte flipped',
      (where) => {
        const [header, payload, signature] = token.split('.') as [string, string, string];
        const bytes = Buffer.from(signature, 'base64url');
        const index = where === 'first' ? 0 : where === 'middle' ? bytes.length >> 1 : bytes.length - 1;
        bytes[index]! ^= 0x01;
        expect(verifies(`${header}.${payload}.${b64url(bytes)}`, key.publicKey)).toBe(false);
      },
    );

    it('rejects a truncated or empty signature without throwing', () => {
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const truncated = b64url(Buffer.from(signature, 'base64url').subarray(0, 10));
      expect(verifies(`${header}.${payload}.${truncated}`, key.publicKey)).toBe(false);
      expect(verifies(`${header}.${payload}.`, key.publicKey)).toBe(false);
    });

    it('rejects a validly signed token that declares a critical header extension', () => {
      const header = { alg: JWS_ALG[algorithm], typ: 'license+jwt', kid: key.kid, crit: ['exp'] };
      expect(verifies(signRaw(header, claims, algorithm, key.privateKey), key.publicKey)).toBe(false);
    });
  });

  it('produces a 64-byte R||S signature for ES256', () => {
    const token = signJws(claims, keys['ecdsa-p256']);
    expect(decodeJws(token).signature).toHaveLength(64);
  });

  it('accepts the RFC 9864 name Ed25519 in the header of an ed25519 token', () => {
    const { kid, privateKey, publicKey } = keys.ed25519;
    const token = signRaw({ alg: 'Ed25519', typ: 'license+jwt', kid }, claims, 'ed25519', privateKey);
    expect(verifies(token, publicKey)).toBe(true);
  });

  it('refuses to sign with a public key', () => {
    expect(() => signJws(claims, { kid: 'k', privateKey: keys.ed25519.publicKey })).toThrow(InvalidKeyError);
  });

  it('refuses to sign a payload that is not a JSON object', () => {
    expect(() => signJws([1, 2], keys.ed25519)).toThrow(TypeError);
  });

  it('throws for a key it cannot pin an algorithm to, rather than report the token as bad', () => {
    const token = signJws(claims, keys['ecdsa-p256']);
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey;
    expect(() => verifies(token, p384)).toThrow(UnsupportedKeyError);
  });

  describe('algorithm confusion', () => {
    it.each(KEY_ALGORITHMS)("rejects alg 'none' with an empty signature (key type %s)", (algorithm) => {
      const token = `${json({ alg: 'none', typ: 'license+jwt', kid: keys[algorithm].kid })}.${json(claims)}.`;
      expect(verifies(token, keys[algorithm].publicKey)).toBe(false);
    });

    it.each(KEY_ALGORITHMS)(
      'rejects an HS256 token whose HMAC secret is the public key PEM (key type %s)',
      (algorithm) => {
        const { kid, publicKey, publicKeyPem } = keys[algorithm];
        const input = `${json({ alg: 'HS256', typ: 'license+jwt', kid })}.${json(claims)}`;
        const mac = createHmac('sha256', publicKeyPem).update(input).digest();
        expect(verifies(`${input}.${b64url(mac)}`, publicKey)).toBe(false);
      },
    );

    it.each(['ed25519', 'ecdsa-p256'] as const)(
      'rejects a token signed by key A but naming key B, verified with key B (key type %s)',
      async (algorithm) => {
        const keyA = keys[algorithm];
        const keyB = await testKey(algorithm, `kid-b-${algorithm}`);
        const token = signJws(claims, { kid: keyB.kid, privateKey: keyA.privateKey });
        expect(decodeJws(token).header.kid).toBe(keyB.kid);
        expect(verifies(token, keyB.publicKey)).toBe(false);
      },
    );

    it('rejects an ES256 token presented to an RSA key', () => {
      const token = signJws(claims, keys['ecdsa-p256']);
      expect(verifies(token, keys['rsa-3072'].publicKey)).toBe(false);
    });

    it('rejects an ed25519-signed token whose header says PS256, with either key', () => {
      const { kid, privateKey, publicKey } = keys.ed25519;
      const token = signRaw({ alg: 'PS256', typ: 'license+jwt', kid }, claims, 'ed25519', privateKey);
      expect(verifies(token, publicKey)).toBe(false);
      expect(verifies(token, keys['rsa-3072'].publicKey)).toBe(false);
    });

    it.each([
      ['RS256', 'rsa-3072'],
      ['ES384', 'ecdsa-p256'],
      ['EdDSA', 'ecdsa-p256'],
    ] as const)('rejects header alg %s on a token correctly signed by a %s key', (alg, algorithm) => {
      const { kid, privateKey, publicKey } = keys[algorithm];
      const token = signRaw({ alg, typ: 'license+jwt', kid }, claims, algorithm, privateKey);
      expect(verifies(token, publicKey)).toBe(false);
    });

    it('rejects an ES256 signature in DER form', () => {
      const { kid, privateKey, publicKey } = keys['ecdsa-p256'];
      const input = `${json({ alg: 'ES256', typ: 'license+jwt', kid })}.${json(claims)}`;
      const der = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'der' });
      expect(verifies(`${input}.${b64url(der)}`, publicKey)).toBe(false);
    });

    it('reads alg from the signed header bytes, not from a decoded header edited afterwards', () => {
      const { kid, publicKey } = keys.ed25519;
      const decoded = decodeJws(`${json({ alg: 'none', kid })}.${json(claims)}.`);
      decoded.header.alg = 'EdDSA';
      expect(verifyJwsSignature(decoded, publicKey)).toBe(false);
    });
  });

  describe('decodeJws', () => {
    const header = json({ alg: 'EdDSA', typ: 'license+jwt', kid: 'k' });
    const payload = json({ sub: 'LIC-X-0000000000000000' });
    const signature = b64url(Buffer.alloc(64, 7));

    it('returns header, payload, signing input and signature bytes without verifying', () => {
      const decoded = decodeJws(`${header}.${payload}.${signature}`);
      expect(decoded).toEqual({
        header: { alg: 'EdDSA', typ: 'license+jwt', kid: 'k' },
        payload: { sub: 'LIC-X-0000000000000000' },
        signingInput: `${header}.${payload}`,
        signature: Buffer.alloc(64, 7),
      });
    });

    it.each([
      ['2 segments', () => `${header}.${payload}`],
      ['4 segments', () => `${header}.${payload}.${signature}.${signature}`],
      ['an empty string', () => ''],
      ["'+' from the standard base64 alphabet", () => `${header}.${payload}.${signature.slice(0, -1)}+`],
      ["'/' from the standard base64 alphabet", () => `${header}.${payload}/.${signature}`],
      ['base64 padding', () => `${header}.${payload}.${signature}==`],
      ['whitespace', () => `${header}.${payload} .${signature}`],
      ['non-zero padding bits', () => `${header}.${payload}.${signature.slice(0, -1)}D`],
      ['a header that is not JSON', () => `${b64url('{alg:EdDSA}')}.${payload}.${signature}`],
      ['a header that is a JSON string', () => `${json('EdDSA')}.${payload}.${signature}`],
      ['a header without alg', () => `${json({ typ: 'license+jwt' })}.${payload}.${signature}`],
      ['a header whose alg is not a string', () => `${json({ alg: 1 })}.${payload}.${signature}`],
      ['a payload that is a JSON array', () => `${header}.${json([1, 2])}.${signature}`],
      ['a payload that is a JSON number', () => `${header}.${json(42)}.${signature}`],
      ['a payload that is JSON null', () => `${header}.${json(null)}.${signature}`],
      [
        'a payload that is not UTF-8',
        () => `${header}.${b64url(Buffer.from([0x7b, 0xff, 0x7d]))}.${signature}`,
      ],
      ['an empty payload', () => `${header}..${signature}`],
    ])('rejects %s', (_label, token) => {
      expect(() => decodeJws(token())).toThrow(MalformedJwsError);
    });
  });
});
