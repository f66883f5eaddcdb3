// Compact JWS pieces for the vectors. Genuine documents come from the platform's own signers
// (signJws, signAnswer). What no signer of the platform would make (another alg in the header, a
// DER signature, a crit member, a payload written by hand) is built here, on purpose.
import { constants, createHmac, sign, verify, type KeyObject } from 'node:crypto';
import type { SignaturePool } from './signature-pool';
import type { TestKey } from './test-keys';

export const b64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');
export const jsonSegment = (value: unknown): string => b64url(JSON.stringify(value));
export const fromSegment = (segment: string): unknown =>
  JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));

export interface Parts {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  segments: [string, string, string];
}

export function parts(token: string): Parts {
  const segments = token.split('.') as [string, string, string];
  return {
    header: fromSegment(segments[0]) as Record<string, unknown>,
    payload: segments[1] === '' ? {} : (fromSegment(segments[1]) as Record<string, unknown>),
    segments,
  };
}

/** How a raw signature is made: the JOSE algorithm of the key, or a deliberately wrong variant. */
export type SignatureKind =
  'jose' | 'ecdsa-der' | 'rsa-pss-salt-0' | 'rsa-pss-salt-64' | 'rsa-pkcs1-v1_5' | 'rsa-pss-sha1-mgf';

function keyType(key: KeyObject): string {
  return key.asymmetricKeyType ?? 'secret';
}

function signer(kind: SignatureKind, key: KeyObject): { digest: string | null; options: object } {
  const type = keyType(key);
  if (type === 'ed25519') return { digest: null, options: {} };
  if (type === 'ec')
    return { digest: 'sha256', options: { dsaEncoding: kind === 'ecdsa-der' ? 'der' : 'ieee-p1363' } };
  const pss = (saltLength: number) => ({ padding: constants.RSA_PKCS1_PSS_PADDING, saltLength });
  switch (kind) {
    case 'rsa-pss-salt-0':
      return { digest: 'sha256', options: pss(0) };
    case 'rsa-pss-salt-64':
      return { digest: 'sha256', options: pss(64) };
    case 'rsa-pkcs1-v1_5':
      return { digest: 'sha256', options: { padding: constants.RSA_PKCS1_PADDING } };
    case 'rsa-pss-sha1-mgf':
      // Node's MGF1 follows the digest: SHA-1 here, where PS256 needs SHA-256.
      return { digest: 'sha1', options: pss(32) };
    default:
      return { digest: 'sha256', options: pss(32) };
  }
}

/** Signs `signingInput` with a test key, reusing a committed signature when one still verifies. */
export function signatureOf(
  pool: SignaturePool,
  signingInput: string,
  key: TestKey,
  kind: SignatureKind = 'jose',
): string {
  const { digest, options } = signer(kind, key.privateKey);
  const data = Buffer.from(signingInput, 'utf8');
  return pool.signature(
    signingInput,
    () => sign(digest, data, { key: key.privateKey, ...options }),
    (signature) => verify(digest, data, { key: key.publicKey, ...options }, signature),
  );
}

/** A compact JWS of any header and payload text, signed with a test key. */
export function signRaw(
  pool: SignaturePool,
  header: object,
  payloadText: string,
  key: TestKey,
  kind: SignatureKind = 'jose',
): string {
  const signingInput = `${jsonSegment(header)}.${b64url(payloadText)}`;
  return `${signingInput}.${signatureOf(pool, signingInput, key, kind)}`;
}

/** The token with another payload and the original signature: a tampered document. */
export function withPayload(token: string, payload: unknown): string {
  const [header, , signature] = token.split('.') as [string, string, string];
  return `${header}.${jsonSegment(payload)}.${signature}`;
}

/** The token with another header and the original signature. */
export function withHeader(token: string, header: unknown): string {
  const [, payload, signature] = token.split('.') as [string, string, string];
  return `${jsonSegment(header)}.${payload}.${signature}`;
}

/** `alg: none`: the original header with alg none, the payload, and an empty signature. */
export function algNone(token: string): string {
  const { header, segments } = parts(token);
  return `${jsonSegment({ ...header, alg: 'none' })}.${segments[1]}.`;
}

/** HS256 keyed with the public key's PEM text: the classic algorithm-confusion forgery. */
export function hs256(token: string, secret: string): string {
  const { header, segments } = parts(token);
  const signingInput = `${jsonSegment({ ...header, alg: 'HS256' })}.${segments[1]}`;
  return `${signingInput}.${b64url(createHmac('sha256', secret).update(signingInput).digest())}`;
}

/**
 * The signature segment with its last character moved to one that leaves padding bits set: the
 * same bytes for a lax decoder, a non-canonical encoding for a strict one.
 */
export function nonCanonicalSignature(token: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const signature = token.slice(token.lastIndexOf('.') + 1);
  const spareBits = (signature.length * 6) % 8;
  if (spareBits === 0) throw new Error('this signature has no padding bits to set');
  const last = alphabet.indexOf(signature.at(-1)!);
  return `${token.slice(0, -1)}${alphabet[last + 1]}`;
}
