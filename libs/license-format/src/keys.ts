import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPair as generateNodeKeyPair,
  type KeyObject,
} from 'node:crypto';

/** The signing algorithms of key pairs: the one list, used by signing, the API's validation and the database. */
export const KEY_ALGORITHMS = Object.freeze(['ed25519', 'ecdsa-p256', 'rsa-3072'] as const);
export type KeyAlgorithm = (typeof KEY_ALGORITHMS)[number];

export type JwsAlgorithm = 'EdDSA' | 'ES256' | 'PS256';

export interface GeneratedKeyPair {
  algorithm: KeyAlgorithm;
  /** SPKI, PEM-encoded. */
  publicKeyPem: string;
  /** PKCS#8, PEM-encoded, unencrypted: callers encrypt it at rest. */
  privateKeyPem: string;
  fingerprint: string;
}

export class InvalidKeyError extends Error {
  override readonly name = 'InvalidKeyError';
}

export class UnsupportedKeyError extends Error {
  override readonly name = 'UnsupportedKeyError';
}

// Below this an RSA key is too weak to trust, whatever size we generate ourselves.
const MIN_RSA_MODULUS_BITS = 2048;
const GENERATED_RSA_MODULUS_BITS = 3072;

// Only one PEM block, with exactly these labels: Node would otherwise happily derive a public key
// from a private key, read one out of a certificate, or accept PKCS#1/SEC1 encodings.
const SPKI_PEM = /^-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----$/;
const PKCS8_PEM = /^-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----$/;

export function generateKeyPair(algorithm: KeyAlgorithm): Promise<GeneratedKeyPair> {
  const encoding = {
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  } as const;
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, publicKeyPem: string, privateKeyPem: string): void => {
      if (err) {
        reject(err);
        return;
      }
      resolve({ algorithm, publicKeyPem, privateKeyPem, fingerprint: publicKeyFingerprint(publicKeyPem) });
    };
    switch (algorithm) {
      case 'ed25519':
        generateNodeKeyPair('ed25519', encoding, done);
        return;
      case 'ecdsa-p256':
        generateNodeKeyPair('ec', { namedCurve: 'prime256v1', ...encoding }, done);
        return;
      case 'rsa-3072':
        generateNodeKeyPair(
          'rsa',
          { modulusLength: GENERATED_RSA_MODULUS_BITS, publicExponent: 0x10001, ...encoding },
          done,
        );
        return;
      default:
        reject(new UnsupportedKeyError(`unsupported key algorithm: ${String(algorithm satisfies never)}`));
    }
  });
}

/** SHA-256 of the DER-encoded SPKI public key, lowercase hex (docs/api.md). */
export function publicKeyFingerprint(publicKey: KeyObject | string): string {
  const key = typeof publicKey === 'string' ? parsePublicKey(publicKey) : publicKey;
  if (key.type !== 'public') {
    // Handing the private half to code that publishes fingerprints is a mix-up worth surfacing.
    throw new InvalidKeyError('a fingerprint is taken of a public key');
  }
  const der = key.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('hex');
}

/**
 * Classifies a public or private key. Any RSA key of 2048 bits or more is reported as
 * 'rsa-3072': the name is the size we generate, but keys of at least 2048 bits verify and sign
 * PS256 the same way. 'rsa-pss' keys are rejected: their embedded parameters can forbid the
 * PS256 settings we use, and we never generate them.
 */
export function keyAlgorithmOf(key: KeyObject): KeyAlgorithm {
  if (key.type === 'secret') {
    throw new UnsupportedKeyError('symmetric secrets are not signing keys');
  }
  switch (key.asymmetricKeyType) {
    case 'ed25519':
      return 'ed25519';
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1') {
        return 'ecdsa-p256';
      }
      throw new UnsupportedKeyError(`unsupported EC curve: ${curve ?? 'unknown'}`);
    }
    case 'rsa': {
      const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
      if (bits >= MIN_RSA_MODULUS_BITS) {
        return 'rsa-3072';
      }
      throw new UnsupportedKeyError(`RSA keys need at least ${MIN_RSA_MODULUS_BITS} bits, got ${bits}`);
    }
    default:
      throw new UnsupportedKeyError(`unsupported key type: ${key.asymmetricKeyType ?? 'unknown'}`);
  }
}

export function jwsAlgorithmFor(algorithm: KeyAlgorithm): JwsAlgorithm {
  switch (algorithm) {
    case 'ed25519':
      return 'EdDSA';
    case 'ecdsa-p256':
      return 'ES256';
    case 'rsa-3072':
      return 'PS256';
    default:
      throw new UnsupportedKeyError(`unsupported key algorithm: ${String(algorithm satisfies never)}`);
  }
}

/**
 * Parses an SPKI PEM public key. Private keys, certificates, PKCS#1 and anything else are
 * rejected rather than converted, so a caller can never mistake one for the other. The key
 * type is not checked here; keyAlgorithmOf does that.
 */
export function parsePublicKey(pem: string): KeyObject {
  const text = typeof pem === 'string' ? pem.trim() : '';
  if (!SPKI_PEM.test(text)) {
    throw new InvalidKeyError('expected a single PEM "PUBLIC KEY" (SPKI) block');
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: text, format: 'pem' });
  } catch (cause) {
    throw new InvalidKeyError('unreadable public key', { cause });
  }
  if (key.type !== 'public') {
    throw new InvalidKeyError('not a public key');
  }
  return key;
}

/** Parses an unencrypted PKCS#8 PEM private key, the only form generateKeyPair produces. */
export function parsePrivateKey(pem: string): KeyObject {
  const text = typeof pem === 'string' ? pem.trim() : '';
  if (!PKCS8_PEM.test(text)) {
    throw new InvalidKeyError('expected a single PEM "PRIVATE KEY" (PKCS#8) block');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch (cause) {
    throw new InvalidKeyError('unreadable private key', { cause });
  }
  if (key.type !== 'private') {
    throw new InvalidKeyError('not a private key');
  }
  return key;
}
