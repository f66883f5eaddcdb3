import { createHash, createSecretKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  generateKeyPair,
  InvalidKeyError,
  jwsAlgorithmFor,
  KEY_ALGORITHMS,
  keyAlgorithmOf,
  parsePrivateKey,
  parsePublicKey,
  publicKeyFingerprint,
  UnsupportedKeyError,
  type GeneratedKeyPair,
  type KeyAlgorithm,
} from './keys';

function pem(label: string, der: Buffer): string {
  const body = der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

describe('key pairs', () => {
  const generated = {} as Record<KeyAlgorithm, GeneratedKeyPair>;

  beforeAll(async () => {
    for (const algorithm of KEY_ALGORITHMS) {
      generated[algorithm] = await generateKeyPair(algorithm);
    }
  });

  it.each(KEY_ALGORITHMS)('generates %s as SPKI and PKCS#8 PEM', (algorithm) => {
    const pair = generated[algorithm];
    expect(pair.algorithm).toBe(algorithm);
    expect(pair.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(pair.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
  });

  it.each(KEY_ALGORITHMS)(
    'classifies a generated %s key, public and private half, as itself',
    (algorithm) => {
      const pair = generated[algorithm];
      expect(keyAlgorithmOf(parsePublicKey(pair.publicKeyPem))).toBe(algorithm);
      expect(keyAlgorithmOf(parsePrivateKey(pair.privateKeyPem))).toBe(algorithm);
    },
  );

  it('generates RSA with a 3072-bit modulus and e = 65537, EC on P-256', () => {
    expect(parsePublicKey(generated['rsa-3072'].publicKeyPem).asymmetricKeyDetails).toEqual({
      modulusLength: 3072,
      publicExponent: 65537n,
    });
    expect(parsePublicKey(generated['ecdsa-p256'].publicKeyPem).asymmetricKeyDetails).toEqual({
      namedCurve: 'prime256v1',
    });
  });

  it('maps each key algorithm to its JWS algorithm', () => {
    expect(KEY_ALGORITHMS.map(jwsAlgorithmFor)).toEqual(['EdDSA', 'ES256', 'PS256']);
  });

  describe('fingerprint', () => {
    it.each(KEY_ALGORITHMS)('of %s is 64 lowercase hex chars: SHA-256 of the DER SPKI', (algorithm) => {
      const pair = generated[algorithm];
      const der = Buffer.from(pair.publicKeyPem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
      const expected = createHash('sha256').update(der).digest('hex');
      expect(pair.fingerprint).toMatch(/^[0-9a-f]{64}$/);
      expect(pair.fingerprint).toBe(expected);
      expect(publicKeyFingerprint(pair.publicKeyPem)).toBe(expected);
      expect(publicKeyFingerprint(parsePublicKey(pair.publicKeyPem))).toBe(expected);
    });

    it('differs between key pairs', () => {
      const fingerprints = new Set(KEY_ALGORITHMS.map((algorithm) => generated[algorithm].fingerprint));
      expect(fingerprints.size).toBe(KEY_ALGORITHMS.length);
    });

    it('refuses the private half', () => {
      expect(() => publicKeyFingerprint(parsePrivateKey(generated.ed25519.privateKeyPem))).toThrow(
        InvalidKeyError,
      );
    });
  });

  describe('parsePublicKey', () => {
    it('accepts surrounding whitespace and CRLF line endings', () => {
      const crlf = `\n${generated['ecdsa-p256'].publicKeyPem.replace(/\n/g, '\r\n')}  `;
      expect(publicKeyFingerprint(parsePublicKey(crlf))).toBe(generated['ecdsa-p256'].fingerprint);
    });

    it.each(KEY_ALGORITHMS)(
      'rejects the %s private key PEM instead of deriving its public key',
      (algorithm) => {
        expect(() => parsePublicKey(generated[algorithm].privateKeyPem)).toThrow(InvalidKeyError);
      },
    );

    it('rejects a PKCS#1 RSA public key, which is not SPKI', () => {
      const pkcs1 = parsePublicKey(generated['rsa-3072'].publicKeyPem).export({
        type: 'pkcs1',
        format: 'pem',
      });
      expect(() => parsePublicKey(pkcs1 as string)).toThrow(InvalidKeyError);
    });

    it('rejects a symmetric secret, whatever the PEM label says', () => {
      const secret = randomBytes(32);
      expect(() => parsePublicKey(pem('SECRET KEY', secret))).toThrow(InvalidKeyError);
      expect(() => parsePublicKey(pem('PUBLIC KEY', secret))).toThrow(InvalidKeyError);
    });

    it.each([
      ['an empty string', () => ''],
      ['plain text', () => 'not a key'],
      [
        'a PEM block with a corrupted body',
        () => '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----',
      ],
      ['two PEM blocks', () => generated.ed25519.publicKeyPem + generated['ecdsa-p256'].publicKeyPem],
      ['text before the PEM block', () => `key:\n${generated.ed25519.publicKeyPem}`],
    ])('rejects %s', (_label, value) => {
      expect(() => parsePublicKey(value())).toThrow(InvalidKeyError);
    });
  });

  describe('parsePrivateKey', () => {
    it('rejects a public key PEM and garbage', () => {
      expect(() => parsePrivateKey(generated.ed25519.publicKeyPem)).toThrow(InvalidKeyError);
      expect(() => parsePrivateKey('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----')).toThrow(
        InvalidKeyError,
      );
    });

    it('rejects a SEC1 EC private key, accepting only the PKCS#8 form generateKeyPair produces', () => {
      const sec1 = parsePrivateKey(generated['ecdsa-p256'].privateKeyPem).export({
        type: 'sec1',
        format: 'pem',
      });
      expect(() => parsePrivateKey(sec1 as string)).toThrow(InvalidKeyError);
    });
  });

  describe('keyAlgorithmOf', () => {
    it('accepts RSA from 2048 bits as the rsa-3072 (PS256) family', () => {
      const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      expect(keyAlgorithmOf(publicKey)).toBe('rsa-3072');
    });

    it('rejects RSA below 2048 bits', () => {
      const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
      expect(() => keyAlgorithmOf(publicKey)).toThrow(UnsupportedKeyError);
    });

    it('rejects a secp384r1 key', () => {
      const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
      const parsed = parsePublicKey(publicKey.export({ type: 'spki', format: 'pem' }) as string);
      expect(() => keyAlgorithmOf(parsed)).toThrow(UnsupportedKeyError);
    });

    it('rejects x25519, ed448 and rsa-pss keys', () => {
      expect(() => keyAlgorithmOf(generateKeyPairSync('x25519').publicKey)).toThrow(UnsupportedKeyError);
      expect(() => keyAlgorithmOf(generateKeyPairSync('ed448').publicKey)).toThrow(UnsupportedKeyError);
      const rsaPss = generateKeyPairSync('rsa-pss', { modulusLength: 2048 }).publicKey;
      expect(() => keyAlgorithmOf(rsaPss)).toThrow(UnsupportedKeyError);
    });

    it('rejects a symmetric secret key', () => {
      expect(() => keyAlgorithmOf(createSecretKey(randomBytes(32)))).toThrow(UnsupportedKeyError);
    });
  });
});
