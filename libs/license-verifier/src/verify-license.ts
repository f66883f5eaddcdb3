import {
  fileExpiryOf,
  licenseTimesFit,
  readLicenseClaims,
  type LicenseClaims,
  type LicenseType,
  type PolicyLimits,
} from './claims';
import { base64, fromBase64, utf8, utf8Bytes } from './encoding';
import { decodeCompactJws, keysFor, someVerifies, type DecodedJws } from './jws';
import { importPublicKeys, type PublicKeyInput } from './public-key';

/** Every reason a license can be refused without asking the licensing service. */
export type VerifyErrorCode =
  | 'malformed'
  | 'signature_invalid'
  | 'unknown_key'
  | 'product_mismatch'
  | 'not_yet_valid'
  | 'expired'
  | 'file_expired'
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
  /** The entitlement codes the file carries, sorted; empty when it carries none. */
  entitlements: string[];
  max_seats: number;
  hardware_binding: { fingerprint: string } | null;
  /** A checkout file of an activation: the machine it is bound to; null otherwise. */
  fingerprint: string | null;
  valid_from: string;
  /** null for a license that never expires. */
  valid_until: string | null;
  /** When the file was signed (`iat`). */
  issued_at: string;
  /**
   * When the file stops verifying (`exp`): a checkout file's own expiry, or the license's
   * `valid_until` for an ordinary file. null when the file never expires.
   */
  expires_at: string | null;
  /** The license has ended (its `valid_until` has passed). */
  is_expired: boolean;
  /** A checkout file past its own expiry: check out again. */
  is_file_expired: boolean;
  /** A checkout file's policy limits, when it carries them. */
  policy?: PolicyLimits;
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
  /**
   * This machine's fingerprint: a license bound to another machine is refused, and so is a checkout
   * file of another machine's activation.
   */
  fingerprint?: string;
  /**
   * Leeway for a skewed clock, applied to both ends of the validity window and to a checkout
   * file's expiry (default 0).
   */
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
  file_expired: 'The license file has expired: check it out again',
  fingerprint_mismatch: 'The license is bound to another machine',
};

const LICENSE_TYP = 'license+jwt';

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
  const { expired, fileExpired } = endsOf(claims, nowMs - toleranceMs);
  if (expired) codes.push('expired');
  if (fileExpired) codes.push('file_expired');
  if (
    options.fingerprint !== undefined &&
    ((claims.hardware_binding !== null && claims.hardware_binding.fingerprint !== options.fingerprint) ||
      (claims.fingerprint !== undefined && claims.fingerprint !== options.fingerprint))
  ) {
    codes.push('fingerprint_mismatch');
  }

  return {
    valid: codes.length === 0,
    license: summary(header, claims, { expired, fileExpired }),
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
  return summary(decoded.header, decoded.claims, endsOf(decoded.claims, Date.now()));
}

/** The API's `license_blob` for a license file's text: standard base64 of its bytes. */
export const licenseBlobOf = (jws: string): string => base64(utf8Bytes(jws));

/**
 * Which ends the file has passed at `atMs`. An ordinary file's `exp` is the license's end. A
 * checkout file's `exp` is the file's own end, and its `valid_until` the license's.
 */
function endsOf(claims: LicenseClaims, atMs: number): { expired: boolean; fileExpired: boolean } {
  const fileExp = fileExpiryOf(claims);
  const licenseEnd = fileExp === undefined ? claims.exp : secondsOf(claims.valid_until);
  return {
    expired: licenseEnd !== undefined && licenseEnd * 1000 <= atMs,
    fileExpired: fileExp !== undefined && fileExp * 1000 <= atMs,
  };
}

const secondsOf = (iso: string | null): number | undefined =>
  iso === null ? undefined : Math.floor(Date.parse(iso) / 1000);

interface Decoded extends DecodedJws {
  claims: LicenseClaims;
}

function decode(input: LicenseInput): Decoded | undefined {
  const jws = compactJwsOf(input);
  const decoded = jws === undefined ? undefined : decodeCompactJws(jws);
  // A JWS of another type is not a license, whoever signed it.
  if (!decoded?.payload || decoded.header['typ'] !== LICENSE_TYP) return undefined;
  const claims = readLicenseClaims(decoded.payload);
  // A time no Date can hold is no license's: refused here, so the summary never throws on it.
  return claims && licenseTimesFit(claims) ? { ...decoded, claims } : undefined;
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

function summary(
  header: Record<string, unknown>,
  claims: LicenseClaims,
  ends: { expired: boolean; fileExpired: boolean },
): VerifiedLicense {
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
    entitlements: [...(claims.entitlements ?? [])],
    max_seats: claims.max_seats,
    hardware_binding: claims.hardware_binding && { fingerprint: claims.hardware_binding.fingerprint },
    fingerprint: claims.fingerprint ?? null,
    valid_from: claims.valid_from,
    valid_until: claims.valid_until,
    issued_at: new Date(claims.iat * 1000).toISOString(),
    expires_at: claims.exp === undefined ? null : new Date(claims.exp * 1000).toISOString(),
    is_expired: ends.expired,
    is_file_expired: ends.fileExpired,
    ...(claims.policy === undefined ? {} : { policy: { ...claims.policy } }),
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
