import { readLicenseClaims, type LicenseClaims, type LicenseType } from './claims';
import { base64, fromBase64, fromBase64url, utf8, utf8Bytes } from './encoding';
import { importPublicKeys, type LicensePublicKey, type PublicKeyInput } from './public-key';
import { subtle, type VerifyAlgorithm } from './webcrypto';

/** Every reason a license can be refused without asking the licensing service. */
export type VerifyErrorCode =
  | 'malformed'
  | 'signature_invalid'
  | 'unknown_key'
  | 'product_mismatch'
  | 'not_yet_valid'
  | 'expired'
  | 'fingerprint_mismatch';

export interface VerifyError {
  code: VerifyErrorCode;
  message: string;
}

/** What a license file says, decoded (snake_case, as the API and the CLI's JSON say it). */
export interface VerifiedLicense {
  license_id: string;
  serial: string;
  organization_id: string;
  product_id: string;
  product_code: string;
  license_type: LicenseType;
  customer_id: string | null;
  customer_email: string | null;
  features: string[];
  max_seats: number;
  hardware_binding: { fingerprint: string } | null;
  valid_from: string;
  /** null for a license that never expires. */
  valid_until: string | null;
  issued_at: string;
  is_expired: boolean;
  /** The key pair that signed it (the header's `kid`). */
  key_id: string | null;
  /** The header's `alg`. */
  algorithm: string;
  /** The signed payload as it is. */
  claims: LicenseClaims;
}

export interface VerifyResult {
  /** True only when `errors` is empty. */
  valid: boolean;
  /** The decoded license whenever the file could be decoded, even when it is not valid. */
  license: VerifiedLicense | null;
  /** Every problem that applies; after `malformed` nothing else is checked. */
  errors: VerifyError[];
}

export interface VerifyOptions {
  /** The time to check against (default: now). */
  now?: Date | number;
  /** The product the license must be for. */
  productId?: string;
  /** This machine's fingerprint: a license bound to another machine is refused. */
  fingerprint?: string;
  /** Leeway for a skewed clock, applied to both ends of the validity window (default 0). */
  clockToleranceSeconds?: number;
}

/** A license file's bytes, its text, or the API's base64 `license_blob`. */
export type LicenseInput = string | Uint8Array | ArrayBuffer;

const MESSAGES: Record<VerifyErrorCode, string> = {
  malformed: 'The license is not a signed license file',
  signature_invalid: 'The signature does not verify with the key',
  unknown_key: 'The license was signed by a key pair this key set does not hold',
  product_mismatch: 'The license belongs to another product',
  not_yet_valid: 'The license is not valid yet',
  expired: 'The license has expired',
  fingerprint_mismatch: 'The license is bound to another machine',
};

const LICENSE_TYP = 'license+jwt';
const ES256_SIGNATURE_LENGTH = 64;
const PSS_SALT_LENGTH = 32;

const VERIFY: Record<LicensePublicKey['type'], VerifyAlgorithm> = {
  ed25519: { name: 'Ed25519' },
  'ecdsa-p256': { name: 'ECDSA', hash: 'SHA-256' },
  rsa: { name: 'RSA-PSS', saltLength: PSS_SALT_LENGTH },
};

/**
 * Verifies a license file offline. The algorithm comes from the key, never from the file: a
 * header naming another algorithm (`none`, `HS256`, ...) fails the signature. Rejects (throws)
 * only when the public key or the options are unusable; a bad license is a result, not an error.
 */
export async function verifyLicense(
  input: LicenseInput,
  publicKey: PublicKeyInput,
  options: VerifyOptions = {},
): Promise<VerifyResult> {
  const keys = await importPublicKeys(publicKey);
  const nowMs = timeOf(options.now);
  const toleranceMs = toleranceOf(options.clockToleranceSeconds);

  const decoded = decode(input);
  if (!decoded) return { valid: false, license: null, errors: [error('malformed')] };
  const { header, claims } = decoded;

  const codes: VerifyErrorCode[] = [];
  const candidates = keysFor(keys, header['kid']);
  if (candidates.length === 0) codes.push('unknown_key');
  else if (!(await someVerifies(decoded, candidates))) codes.push('signature_invalid');
  if (options.productId !== undefined && claims.product_id !== options.productId)
    codes.push('product_mismatch');
  if (claims.nbf * 1000 > nowMs + toleranceMs) codes.push('not_yet_valid');
  if (claims.exp !== undefined && claims.exp * 1000 <= nowMs - toleranceMs) codes.push('expired');
  if (
    options.fingerprint !== undefined &&
    claims.hardware_binding !== null &&
    claims.hardware_binding.fingerprint !== options.fingerprint
  ) {
    codes.push('fingerprint_mismatch');
  }

  return {
    valid: codes.length === 0,
    license: summary(header, claims, codes.includes('expired')),
    errors: codes.map(error),
  };
}

/**
 * The license a file holds, decoded but NOT verified: for display and diagnostics only. Undefined
 * when the input is not a license file.
 */
export function decodeLicense(input: LicenseInput): VerifiedLicense | undefined {
  const decoded = decode(input);
  if (!decoded) return undefined;
  const expired = decoded.claims.exp !== undefined && decoded.claims.exp * 1000 <= Date.now();
  return summary(decoded.header, decoded.claims, expired);
}

/** The API's `license_blob` for a license file's text: standard base64 of its bytes. */
export const licenseBlobOf = (jws: string): string => base64(utf8Bytes(jws));

interface Decoded {
  header: Record<string, unknown>;
  claims: LicenseClaims;
  signingInput: Uint8Array;
  signature: Uint8Array;
}

function decode(input: LicenseInput): Decoded | undefined {
  const jws = compactJwsOf(input);
  if (jws === undefined) return undefined;
  const segments = jws.split('.');
  if (segments.length !== 3) return undefined;
  const [headerSegment, payloadSegment, signatureSegment] = segments as [string, string, string];
  const header = jsonObject(headerSegment);
  const payload = jsonObject(payloadSegment);
  const signature = fromBase64url(signatureSegment);
  if (!header || !payload || !signature || typeof header['alg'] !== 'string') return undefined;
  // A JWS of another type is not a license, whoever signed it.
  if (header['typ'] !== LICENSE_TYP) return undefined;
  const claims = readLicenseClaims(payload);
  if (!claims) return undefined;
  return { header, claims, signingInput: utf8Bytes(`${headerSegment}.${payloadSegment}`), signature };
}

/**
 * The compact JWS in any of the accepted inputs. A JWS always holds dots and base64 never does,
 * which tells the file's text from a license_blob. Surrounding whitespace (an editor's final
 * newline, a pasted blob's line breaks) is dropped; anything else stays and fails.
 */
function compactJwsOf(input: LicenseInput): string | undefined {
  let text: string | undefined;
  if (typeof input === 'string') text = input;
  else if (input instanceof Uint8Array) text = utf8(input);
  else if (input instanceof ArrayBuffer) text = utf8(new Uint8Array(input));
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (trimmed.includes('.')) return trimmed;
  const bytes = fromBase64(trimmed.replace(/\s+/g, ''));
  const jws = bytes && utf8(bytes);
  return jws?.includes('.') ? jws : undefined;
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
 * The keys that may have signed the license. A key that says which key pair it is (a JWK's
 * `kid`) is used only for the license naming it; keys without a kid (PEMs) are all tried.
 */
export function keysFor(keys: LicensePublicKey[], kid: unknown): LicensePublicKey[] {
  const named = keys.find((key) => key.kid !== undefined && key.kid === kid);
  return named ? [named] : keys.filter((key) => key.kid === undefined);
}

/** The signed parts of a compact JWS. */
export type SignedParts = Pick<Decoded, 'header' | 'signingInput' | 'signature'>;

/**
 * Whether one of `keys` signed a JWS of this package's other kinds (activation files): the same
 * key choice by `kid` and the same algorithm pinning as a license's.
 */
export async function signedByOneOf(parts: SignedParts, keys: LicensePublicKey[]): Promise<boolean> {
  const candidates = keysFor(keys, parts.header['kid']);
  return candidates.length > 0 && someVerifies(parts, candidates);
}

async function someVerifies(decoded: SignedParts, keys: LicensePublicKey[]): Promise<boolean> {
  for (const key of keys) if (await signatureVerifies(decoded, key)) return true;
  return false;
}

async function signatureVerifies(decoded: SignedParts, key: LicensePublicKey): Promise<boolean> {
  const { header, signature } = decoded;
  // No JWS extension is implemented, so a critical one invalidates the file (RFC 7515 §4.1.11).
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

function summary(header: Record<string, unknown>, claims: LicenseClaims, expired: boolean): VerifiedLicense {
  return {
    license_id: claims.jti,
    serial: claims.sub,
    organization_id: claims.iss,
    product_id: claims.product_id,
    product_code: claims.product_code,
    license_type: claims.license_type,
    customer_id: claims.customer_id,
    customer_email: claims.customer_email,
    features: [...claims.features],
    max_seats: claims.max_seats,
    hardware_binding: claims.hardware_binding && { fingerprint: claims.hardware_binding.fingerprint },
    valid_from: claims.valid_from,
    valid_until: claims.valid_until,
    issued_at: new Date(claims.iat * 1000).toISOString(),
    is_expired: expired,
    key_id: typeof header['kid'] === 'string' ? header['kid'] : null,
    algorithm: header['alg'] as string,
    claims,
  };
}

export function timeOf(now: Date | number | undefined): number {
  const ms = now === undefined ? Date.now() : typeof now === 'number' ? now : now.getTime();
  if (!Number.isFinite(ms)) throw new TypeError('options.now is not a valid time');
  return ms;
}

function toleranceOf(seconds: number | undefined): number {
  if (seconds === undefined) return 0;
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new TypeError('options.clockToleranceSeconds is a non-negative number');
  }
  return seconds * 1000;
}

const error = (code: VerifyErrorCode): VerifyError => ({ code, message: MESSAGES[code] });
