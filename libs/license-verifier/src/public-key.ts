import { fromBase64, fromBase64url } from './encoding';
import { subtle, type ImportAlgorithm, type WebCryptoKey } from './webcrypto';

/** The three kinds of key the license service signs with. */
export type KeyType = 'ed25519' | 'ecdsa-p256' | 'rsa';

/** A public key as a JWK: OKP/Ed25519, EC/P-256 or RSA. Private members (`d`, ...) are refused. */
export interface PublicJwk {
  kty: string;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
  kid?: string;
  alg?: string;
  use?: string;
  key_ops?: string[];
  [member: string]: unknown;
}

/** Several keys (key rotation): the license's `kid` header picks one. */
export interface PublicJwkSet {
  keys: PublicJwk[];
}

/** A public key imported once, for verifying many licenses. */
export interface LicensePublicKey {
  readonly type: KeyType;
  /** The key pair id, when the key said so (a JWK's `kid`). */
  readonly kid: string | undefined;
  /** The one JWS `alg` this key verifies (`Ed25519` is accepted as another name for `EdDSA`). */
  readonly alg: 'EdDSA' | 'ES256' | 'PS256';
  readonly cryptoKey: WebCryptoKey;
}

/** What verifyLicense takes as the key: a PEM (SPKI) text, a JWK, a JWK Set, or an imported key. */
export type PublicKeyInput = string | PublicJwk | PublicJwkSet | LicensePublicKey | LicensePublicKey[];

/** The key could not be used: not a public key, or of a kind licenses are never signed with. */
export class InvalidPublicKeyError extends Error {
  override readonly name = 'InvalidPublicKeyError';
}

const IMPORT: Record<KeyType, ImportAlgorithm> = {
  ed25519: { name: 'Ed25519' },
  'ecdsa-p256': { name: 'ECDSA', namedCurve: 'P-256' },
  rsa: { name: 'RSA-PSS', hash: 'SHA-256' },
};
const ALG: Record<KeyType, LicensePublicKey['alg']> = {
  ed25519: 'EdDSA',
  'ecdsa-p256': 'ES256',
  rsa: 'PS256',
};

// Weaker RSA keys are refused, as the service refuses them.
const MIN_RSA_MODULUS_BITS = 2048;

// DER object identifiers, as their content bytes.
const OID_ED25519 = '2b6570'; // 1.3.101.112
const OID_EC_PUBLIC_KEY = '2a8648ce3d0201'; // 1.2.840.10045.2.1
const OID_P256 = '2a8648ce3d030107'; // 1.2.840.10045.3.1.7
const OID_RSA_ENCRYPTION = '2a864886f70d010101'; // 1.2.840.113549.1.1.1

// One PEM block with exactly this label: private keys, certificates and PKCS#1 are not accepted.
const SPKI_PEM = /^-----BEGIN PUBLIC KEY-----\r?\n([A-Za-z0-9+/=\r\n]+)-----END PUBLIC KEY-----$/;

/** Imports a PEM (SPKI) or JWK public key for verifyLicense. */
export async function importPublicKey(key: string | PublicJwk): Promise<LicensePublicKey> {
  if (typeof key === 'string') return importPem(key);
  if (key !== null && typeof key === 'object' && !Array.isArray(key)) return importJwk(key);
  throw new InvalidPublicKeyError('a public key is a PEM text or a JWK object');
}

/** Every key a PublicKeyInput holds, imported. */
export async function importPublicKeys(input: PublicKeyInput): Promise<LicensePublicKey[]> {
  if (Array.isArray(input)) return input.map(asImported);
  if (isImported(input)) return [input];
  if (typeof input === 'object' && input !== null && 'keys' in input && Array.isArray(input.keys)) {
    if (input.keys.length === 0) throw new InvalidPublicKeyError('the JWK Set holds no keys');
    return Promise.all(input.keys.map((jwk) => importJwk(jwk)));
  }
  return [await importPublicKey(input as string | PublicJwk)];
}

function isImported(value: unknown): value is LicensePublicKey {
  return typeof value === 'object' && value !== null && 'cryptoKey' in value && 'alg' in value;
}

function asImported(value: unknown): LicensePublicKey {
  if (!isImported(value)) throw new InvalidPublicKeyError('expected keys returned by importPublicKey');
  return value;
}

async function importPem(pem: string): Promise<LicensePublicKey> {
  const match = SPKI_PEM.exec(pem.trim());
  const der = match ? fromBase64(match[1]!.replace(/\s+/g, '')) : undefined;
  if (!der) throw new InvalidPublicKeyError('expected a single PEM "PUBLIC KEY" (SPKI) block');
  const type = spkiKeyType(der);
  const cryptoKey = await subtle()
    .importKey('spki', der, IMPORT[type], false, ['verify'])
    .catch((cause: unknown) => {
      throw new InvalidPublicKeyError('unreadable public key', { cause });
    });
  if (type === 'rsa') checkRsaSize(cryptoKey);
  return Object.freeze({ type, kid: undefined, alg: ALG[type], cryptoKey });
}

async function importJwk(jwk: PublicJwk): Promise<LicensePublicKey> {
  if (typeof jwk !== 'object' || jwk === null) throw new InvalidPublicKeyError('a JWK is an object');
  for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) {
    // Handing a private (or secret) key to a verifier is a mistake worth surfacing, not ignoring.
    if (member in jwk) throw new InvalidPublicKeyError(`a public JWK has no "${member}" member`);
  }
  const type = jwkKeyType(jwk);
  if (jwk.alg !== undefined && !(jwk.alg === ALG[type] || (type === 'ed25519' && jwk.alg === 'Ed25519'))) {
    throw new InvalidPublicKeyError(`a ${type} key verifies ${ALG[type]}, not ${String(jwk.alg)}`);
  }
  if (jwk.use !== undefined && jwk.use !== 'sig')
    throw new InvalidPublicKeyError('the JWK is not for signatures');
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) {
    throw new InvalidPublicKeyError('the JWK does not allow "verify"');
  }
  if (jwk.kid !== undefined && typeof jwk.kid !== 'string')
    throw new InvalidPublicKeyError('kid is a string');
  // Only the key material is imported: runtimes disagree on which alg names they accept for Ed25519.
  const material =
    type === 'rsa'
      ? { kty: 'RSA', n: member(jwk, 'n'), e: member(jwk, 'e') }
      : type === 'ed25519'
        ? { kty: 'OKP', crv: 'Ed25519', x: member(jwk, 'x') }
        : { kty: 'EC', crv: 'P-256', x: member(jwk, 'x'), y: member(jwk, 'y') };
  const cryptoKey = await subtle()
    .importKey('jwk', material, IMPORT[type], false, ['verify'])
    .catch((cause: unknown) => {
      throw new InvalidPublicKeyError('unreadable JWK', { cause });
    });
  if (type === 'rsa') checkRsaSize(cryptoKey);
  return Object.freeze({ type, kid: jwk.kid, alg: ALG[type], cryptoKey });
}

function member(jwk: PublicJwk, name: string): string {
  const value = jwk[name];
  if (typeof value !== 'string' || !fromBase64url(value)) {
    throw new InvalidPublicKeyError(`the JWK's "${name}" is not base64url`);
  }
  return value;
}

function jwkKeyType(jwk: PublicJwk): KeyType {
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'ed25519';
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ecdsa-p256';
  if (jwk.kty === 'RSA') return 'rsa';
  throw new InvalidPublicKeyError(
    `unsupported JWK: kty ${String(jwk.kty)}${jwk.crv === undefined ? '' : `, crv ${String(jwk.crv)}`}`,
  );
}

function checkRsaSize(key: WebCryptoKey): void {
  const bits = (key as { algorithm?: { modulusLength?: number } }).algorithm?.modulusLength ?? 0;
  if (bits < MIN_RSA_MODULUS_BITS) {
    throw new InvalidPublicKeyError(`RSA keys need at least ${MIN_RSA_MODULUS_BITS} bits, got ${bits}`);
  }
}

/**
 * The key type named by an SPKI's AlgorithmIdentifier. WebCrypto needs the algorithm before it
 * imports, so the DER is read this far: SEQUENCE { SEQUENCE { OID, parameters? }, BIT STRING }.
 */
function spkiKeyType(der: Uint8Array): KeyType {
  const reader = new DerReader(der);
  const spki = reader.read(0x30);
  if (!reader.done()) throw new InvalidPublicKeyError('trailing bytes after the SPKI');
  const body = new DerReader(spki);
  const algorithm = new DerReader(body.read(0x30));
  const oid = hex(algorithm.read(0x06));
  const parameter = algorithm.done() ? undefined : algorithm.next();
  if (oid === OID_ED25519) return 'ed25519';
  if (oid === OID_RSA_ENCRYPTION) return 'rsa';
  if (oid === OID_EC_PUBLIC_KEY) {
    if (parameter?.tag === 0x06 && hex(parameter.value) === OID_P256) return 'ecdsa-p256';
    throw new InvalidPublicKeyError('unsupported EC curve: only P-256 keys sign licenses');
  }
  throw new InvalidPublicKeyError(
    'unsupported key type: licenses are signed with Ed25519, P-256 or RSA keys',
  );
}

const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

class DerReader {
  private offset = 0;
  constructor(private readonly bytes: Uint8Array) {}

  done(): boolean {
    return this.offset === this.bytes.length;
  }

  read(tag: number): Uint8Array {
    const element = this.next();
    if (element.tag !== tag) throw new InvalidPublicKeyError('not a DER SubjectPublicKeyInfo');
    return element.value;
  }

  next(): { tag: number; value: Uint8Array } {
    const bad = (): never => {
      throw new InvalidPublicKeyError('not a DER SubjectPublicKeyInfo');
    };
    const tag = this.bytes[this.offset++] ?? bad();
    let length = this.bytes[this.offset++] ?? bad();
    if (length & 0x80) {
      const count = length & 0x7f;
      if (count === 0 || count > 3) bad();
      length = 0;
      for (let i = 0; i < count; i++) length = (length << 8) | (this.bytes[this.offset++] ?? bad());
    }
    const end = this.offset + length;
    if (end > this.bytes.length) bad();
    const value = this.bytes.subarray(this.offset, end);
    this.offset = end;
    return { tag, value };
  }
}
