import {
  constants,
  type KeyObject,
  sign,
  verify,
  type SignKeyObjectInput,
  type VerifyKeyObjectInput,
} from 'node:crypto';
import { InvalidKeyError, jwsAlgorithmFor, keyAlgorithmOf, type KeyAlgorithm } from './keys';

export interface JwsHeader {
  alg: string;
  typ?: string;
  kid?: string;
  [k: string]: unknown;
}

export interface DecodedJws<T = unknown> {
  header: JwsHeader;
  payload: T;
  /** The exact bytes the signature covers: the first two segments as received. */
  signingInput: string;
  signature: Buffer;
}

export class MalformedJwsError extends Error {
  override readonly name = 'MalformedJwsError';
}

const LICENSE_TYP = 'license+jwt';

// RFC 7518 §3.5: the PS256 salt is as long as the SHA-256 output. Pinned on both sides so a
// token signed with another salt length does not verify here either.
const PSS_SALT_LENGTH = 32;

// P-256 R||S, 32 bytes each (RFC 7518 §3.4). DER-encoded signatures are not JWS and are refused.
const ES256_SIGNATURE_LENGTH = 64;

const BASE64URL_SEGMENT = /^[A-Za-z0-9_-]*$/;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Signs `payload` into a compact JWS. `typ` says what the token is (`license+jwt`, a license file,
 * unless told): other documents the product's key signs (revocation lists, activation files) name
 * their own type, so that no verifier that checks it takes one for another.
 */
export function signJws(
  payload: object,
  key: { kid: string; privateKey: KeyObject },
  typ: string = LICENSE_TYP,
): string {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new TypeError('a JWS payload here is a JSON object');
  }
  if (key.privateKey.type !== 'private') {
    throw new InvalidKeyError('signing needs a private key');
  }
  const algorithm = keyAlgorithmOf(key.privateKey);
  const header = { alg: jwsAlgorithmFor(algorithm), typ, kid: key.kid };
  const signingInput = `${encodeJson(header)}.${encodeJson(payload)}`;
  const signature = sign(
    digestFor(algorithm),
    Buffer.from(signingInput, 'utf8'),
    keyOptions(algorithm, key.privateKey),
  );
  return `${signingInput}.${signature.toString('base64url')}`;
}

/** Splits and parses a compact JWS. It does not verify anything: see verifyJwsSignature. */
export function decodeJws<T = unknown>(token: string): DecodedJws<T> {
  if (typeof token !== 'string') {
    throw new MalformedJwsError('a JWS is a string');
  }
  const segments = token.split('.');
  if (segments.length !== 3) {
    throw new MalformedJwsError('a compact JWS has exactly three segments');
  }
  const [headerSegment, payloadSegment, signatureSegment] = segments as [string, string, string];
  const header = parseHeader(headerSegment);
  const payload = parseJsonObject(decodeSegment(payloadSegment, 'payload'), 'payload');
  const signature = decodeSegment(signatureSegment, 'signature');
  return {
    header,
    payload: payload as T,
    signingInput: `${headerSegment}.${payloadSegment}`,
    signature,
  };
}

/**
 * Checks the signature with the algorithm the key dictates; the header's alg is only compared
 * against it, never obeyed (no 'none', no HMAC keyed with the public key, no cross-family
 * confusion). The alg is read from the signed header bytes, not from decoded.header, so what is
 * checked is what was signed. Returns false for any problem with the token; throws
 * UnsupportedKeyError only when the key itself is not one we can verify with.
 */
export function verifyJwsSignature(decoded: DecodedJws, publicKey: KeyObject): boolean {
  const algorithm = keyAlgorithmOf(publicKey);
  try {
    const header = signedHeader(decoded.signingInput);
    // We implement no JWS extensions, so any critical one makes the token invalid (RFC 7515 §4.1.11).
    if ('crit' in header) {
      return false;
    }
    if (!algorithmMatchesKey(header.alg, algorithm)) {
      return false;
    }
    const signature = decoded.signature;
    if (!Buffer.isBuffer(signature)) {
      return false;
    }
    if (algorithm === 'ecdsa-p256' && signature.length !== ES256_SIGNATURE_LENGTH) {
      return false;
    }
    return verify(
      digestFor(algorithm),
      Buffer.from(decoded.signingInput, 'utf8'),
      keyOptions(algorithm, publicKey),
      signature,
    );
  } catch {
    // Malformed signing input or a signature OpenSSL refuses to parse is just a bad token.
    return false;
  }
}

function algorithmMatchesKey(alg: unknown, algorithm: KeyAlgorithm): boolean {
  switch (algorithm) {
    case 'ed25519':
      // RFC 9864 names the same algorithm 'Ed25519'; the license format asks verifiers to accept both.
      return alg === 'EdDSA' || alg === 'Ed25519';
    case 'ecdsa-p256':
      return alg === 'ES256';
    case 'rsa-3072':
      return alg === 'PS256';
    default:
      return algorithm satisfies never;
  }
}

function digestFor(algorithm: KeyAlgorithm): string | null {
  // Ed25519 hashes internally; Node insists on a null digest for it.
  return algorithm === 'ed25519' ? null : 'sha256';
}

function keyOptions(
  algorithm: KeyAlgorithm,
  key: KeyObject,
): KeyObject | (SignKeyObjectInput & VerifyKeyObjectInput) {
  switch (algorithm) {
    case 'ed25519':
      return key;
    case 'ecdsa-p256':
      return { key, dsaEncoding: 'ieee-p1363' };
    case 'rsa-3072':
      // Node's MGF1 uses the signature digest, giving the MGF1-SHA-256 that PS256 requires.
      return { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: PSS_SALT_LENGTH };
    default:
      return algorithm satisfies never;
  }
}

function signedHeader(signingInput: string): JwsHeader {
  const segments = signingInput.split('.');
  if (segments.length !== 2) {
    throw new MalformedJwsError('the signing input is not header.payload');
  }
  return parseHeader(segments[0] as string);
}

function parseHeader(segment: string): JwsHeader {
  const header = parseJsonObject(decodeSegment(segment, 'header'), 'header');
  if (typeof header['alg'] !== 'string') {
    throw new MalformedJwsError('the JWS header has no alg');
  }
  return header as JwsHeader;
}

function encodeJson(value: object): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function decodeSegment(segment: string, what: string): Buffer {
  // Node's base64url decoder also accepts '+', '/', '=' and skips junk, so the alphabet is
  // checked first, and the round trip refuses non-zero padding bits (one token, one encoding).
  if (!BASE64URL_SEGMENT.test(segment) || segment.length % 4 === 1) {
    throw new MalformedJwsError(`the JWS ${what} is not base64url`);
  }
  const bytes = Buffer.from(segment, 'base64url');
  if (bytes.toString('base64url') !== segment) {
    throw new MalformedJwsError(`the JWS ${what} is not canonical base64url`);
  }
  return bytes;
}

function parseJsonObject(bytes: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    throw new MalformedJwsError(`the JWS ${what} is not UTF-8 JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new MalformedJwsError(`the JWS ${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}
