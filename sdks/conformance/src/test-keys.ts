// The fixed keys the vectors are signed with. They are committed under sdks/conformance/keys as
// PKCS#8 PEM files, so that the vectors can be made again with the same keys. They are test keys:
// their private halves are public, and no product may ever use them.
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parsePrivateKey } from '@licensing/license-format';

export const KEYS_DIR = path.join(__dirname, '..', 'keys');

/** The algorithms the platform signs with (libs/license-format KEY_ALGORITHMS). */
export type SigningAlgorithm = 'ed25519' | 'ecdsa-p256' | 'rsa-3072';

export interface TestKey {
  /** The file name without `.pem`. */
  name: string;
  /** The key pair id the platform would give it; undefined for keys that never sign. */
  kid: string | undefined;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** SPKI PEM, as `GET /v1/products/:id/public-key` serves it. */
  pem: string;
  /** The public JWK, key material only. */
  jwk: Record<string, string>;
}

type Generate = () => KeyObject;

const pair = (type: string, options: object): KeyObject =>
  (generateKeyPairSync as (type: string, options: object) => { privateKey: KeyObject })(type, options)
    .privateKey;

const rsa =
  (bits: number): Generate =>
  () =>
    pair('rsa', { modulusLength: bits, publicExponent: 0x10001 });
const ec =
  (namedCurve: string): Generate =>
  () =>
    pair('ec', { namedCurve });

/** Every test key: its file, its kid, and how it was made the first time. */
const KEYS: Record<string, { kid?: string; generate: Generate }> = {
  // The product's key pairs, one per algorithm the platform signs with.
  'product-ed25519': { kid: '6f1d3c2a-5b4e-4a7d-9c8b-1e2f3a4b5c01', generate: () => pair('ed25519', {}) },
  'product-ecdsa-p256': { kid: '6f1d3c2a-5b4e-4a7d-9c8b-1e2f3a4b5c02', generate: ec('prime256v1') },
  'product-rsa-3072': { kid: '6f1d3c2a-5b4e-4a7d-9c8b-1e2f3a4b5c03', generate: rsa(3072) },
  // The product's previous Ed25519 key pair, before a rotation.
  'product-ed25519-previous': {
    kid: '6f1d3c2a-5b4e-4a7d-9c8b-1e2f3a4b5c04',
    generate: () => pair('ed25519', {}),
  },
  // An imported RSA key pair of 2048 bits: the smallest the platform accepts.
  'product-rsa-2048': { kid: '6f1d3c2a-5b4e-4a7d-9c8b-1e2f3a4b5c05', generate: rsa(2048) },
  // Keys of someone else: a signature by one of them is a forgery.
  'other-ed25519': { kid: '0b7e9d1c-2a3f-4e5d-8c6b-7a8f9e0d1c11', generate: () => pair('ed25519', {}) },
  'other-ecdsa-p256': { kid: '0b7e9d1c-2a3f-4e5d-8c6b-7a8f9e0d1c12', generate: ec('prime256v1') },
  'other-rsa-3072': { kid: '0b7e9d1c-2a3f-4e5d-8c6b-7a8f9e0d1c13', generate: rsa(3072) },
  // The organization's response keys, which sign answers (always Ed25519).
  'response-ed25519': { kid: 'c4a2e8f0-7d3b-4b19-8e5a-9f0c1d2e3f21', generate: () => pair('ed25519', {}) },
  'response-ed25519-retired': {
    kid: 'c4a2e8f0-7d3b-4b19-8e5a-9f0c1d2e3f22',
    generate: () => pair('ed25519', {}),
  },
  // Keys no verifier may accept.
  'refused-rsa-1024': { generate: rsa(1024) },
  'refused-ecdsa-p384': { generate: ec('secp384r1') },
  'refused-secp256k1': { generate: ec('secp256k1') },
  'refused-x25519': { generate: () => pair('x25519', {}) },
  'refused-ed448': { generate: () => pair('ed448', {}) },
  'refused-rsa-pss': {
    generate: () =>
      pair('rsa-pss', {
        modulusLength: 2048,
        hashAlgorithm: 'sha256',
        mgf1HashAlgorithm: 'sha256',
        saltLength: 32,
      }),
  },
};

/**
 * Reads every test key. A missing key is made and written only when `create` is set (the spec
 * sets it with UPDATE_VECTORS=1); otherwise it is an error, since new keys change every vector.
 */
export function loadTestKeys(create: boolean): Record<string, TestKey> {
  const keys: Record<string, TestKey> = {};
  for (const [name, spec] of Object.entries(KEYS)) {
    const file = path.join(KEYS_DIR, `${name}.pem`);
    if (!existsSync(file)) {
      if (!create) throw new Error(`${file} is missing: run the spec with UPDATE_VECTORS=1 to make it`);
      mkdirSync(KEYS_DIR, { recursive: true });
      const made = spec.generate().export({ type: 'pkcs8', format: 'pem' }).toString();
      writeFileSync(file, made);
    }
    // The platform's own parser: exactly what the license service accepts as a private key.
    const privateKey = parsePrivateKey(readFileSync(file, 'utf8'));
    const publicKey = createPublicKey(privateKey);
    keys[name] = {
      name,
      kid: spec.kid,
      privateKey,
      publicKey,
      pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      jwk: jwkOf(publicKey),
    };
  }
  return keys;
}

/** The public JWK; empty for a key type JWK has no form for (an RSA-PSS key). */
function jwkOf(publicKey: KeyObject): Record<string, string> {
  try {
    return publicKey.export({ format: 'jwk' }) as Record<string, string>;
  } catch {
    return {};
  }
}
