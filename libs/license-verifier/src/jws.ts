// Compact JWS decoding and algorithm-pinned signature checks, shared by every document the
// platform signs: license files, revocation lists and signed answers.
import { base64url, fromBase64url, utf8, utf8Bytes } from './encoding';
import type { LicensePublicKey } from './public-key';
import { subtle, type VerifyAlgorithm } from './webcrypto';

const ES256_SIGNATURE_LENGTH = 64;
const PSS_SALT_LENGTH = 32;

const VERIFY: Record<LicensePublicKey['type'], VerifyAlgorithm> = {
  ed25519: { name: 'Ed25519' },
  'ecdsa-p256': { name: 'ECDSA', hash: 'SHA-256' },
  rsa: { name: 'RSA-PSS', saltLength: PSS_SALT_LENGTH },
};

/** A compact JWS taken apart; `payload` is undefined for a detached payload (an empty segment). */
export interface DecodedJws {
  header: Record<string, unknown>;
  payload: Record<string, unknown> | undefined;
  signingInput: Uint8Array;
  signature: Uint8Array;
}

/**
 * Splits a compact JWS whose header and payload are JSON objects. With `detached`, the payload
 * segment must be empty and the signing input is made with the given bytes instead (RFC 7515
 * Appendix F). Undefined when anything is malformed.
 */
export function decodeCompactJws(jws: string, detached?: Uint8Array): DecodedJws | undefined {
  const segments = jws.split('.');
  if (segments.length !== 3) return undefined;
  const [headerSegment, payloadSegment, signatureSegment] = segments as [string, string, string];
  const header = jsonObject(headerSegment);
  const signature = fromBase64url(signatureSegment);
  if (!header || !signature || typeof header['alg'] !== 'string') return undefined;
  if (detached) {
    if (payloadSegment !== '') return undefined;
    return {
      header,
      payload: undefined,
      signingInput: utf8Bytes(`${headerSegment}.${base64url(detached)}`),
      signature,
    };
  }
  const payload = jsonObject(payloadSegment);
  if (!payload) return undefined;
  return { header, payload, signingInput: utf8Bytes(`${headerSegment}.${payloadSegment}`), signature };
}

export function jsonObject(segment: string): Record<string, unknown> | undefined {
  const bytes = fromBase64url(segment);
  const text = bytes && utf8(bytes);
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The keys that may have signed a document. A key that says which key it is (a JWK's `kid`) is
 * used only for the document naming it; keys without a kid (PEMs) are all tried.
 */
export function keysFor(keys: LicensePublicKey[], kid: unknown): LicensePublicKey[] {
  const named = keys.find((key) => key.kid !== undefined && key.kid === kid);
  return named ? [named] : keys.filter((key) => key.kid === undefined);
}

export async function someVerifies(decoded: DecodedJws, keys: LicensePublicKey[]): Promise<boolean> {
  for (const key of keys) if (await signatureVerifies(decoded, key)) return true;
  return false;
}

async function signatureVerifies(decoded: DecodedJws, key: LicensePublicKey): Promise<boolean> {
  const { header, signature } = decoded;
  // No JWS extension is implemented, so a critical one invalidates the document (RFC 7515 §4.1.11).
  if ('crit' in header) return false;
  const alg = header['alg'];
  if (!(alg === key.alg || (key.type === 'ed25519' && alg === 'Ed25519'))) return false;
  // DER-encoded ECDSA signatures are not JWS; only the 64-byte R||S form is.
  if (key.type === 'ecdsa-p256' && signature.length !== ES256_SIGNATURE_LENGTH) return false;
  try {
    return await subtle().verify(VERIFY[key.type], key.cryptoKey, signature, decoded.signingInput);
  } catch {
    // A signature the runtime refuses to parse is just a bad signature.
    return false;
  }
}
