// The service's side of these definitions is libs/license-format/src/claims.ts. They are written
// twice on purpose: this package ships alone, with no dependencies, and license-format (Node's
// crypto) cannot be part of it. verify-license.spec.ts holds the two together: the same license
// types, and a property test that both accept exactly the same payloads.

/** The kinds of license the service issues. */
export const LICENSE_TYPES = ['perpetual', 'subscription', 'trial', 'node_locked', 'floating'] as const;
export type LicenseType = (typeof LICENSE_TYPES)[number];

/**
 * The limits of the license's policy, as a checkout file carries them (claim `policy`). Every
 * member is optional: read what is there.
 */
export interface PolicyLimits {
  id?: string;
  name?: string;
  max_machines?: number | null;
  max_processes?: number | null;
  max_uses?: number | null;
  /** When the license's uses go back to 0: `day`, `week` or `month` (UTC); null: never. */
  uses_reset?: string | null;
  heartbeat_interval_seconds?: number | null;
  heartbeat_grace_seconds?: number | null;
  check_in_interval_days?: number | null;
  overage?: string;
  machine_matching?: string;
}

/** The signed JSON payload of a license file. Times are Unix seconds. */
export interface LicenseClaims {
  v: 1;
  /** The license id. */
  jti: string;
  /** The serial. */
  sub: string;
  /** The organization id. */
  iss: string;
  iat: number;
  nbf: number;
  /** Absent for a license that never expires. */
  exp?: number;
  product_id: string;
  product_code: string;
  license_type: LicenseType;
  customer_id: string | null;
  customer_email: string | null;
  features: string[];
  max_seats: number;
  hardware_binding: { fingerprint: string } | null;
  valid_from: string;
  valid_until: string | null;
  /** The license's entitlement codes, sorted; absent when it has none. */
  entitlements?: string[];
  /** A checkout file of an activation: the machine it is bound to. */
  fingerprint?: string;
  /** A checkout file: the limits of the license's policy when it was signed. */
  policy?: PolicyLimits;
}

// The widest time a JavaScript Date holds: 100,000,000 days either side of 1970, in milliseconds.
const MAX_DATE_MS = 8.64e15;

/**
 * Whether Unix seconds fit in a Date. A time outside that range cannot be shown as ISO 8601, so a
 * document carrying one is malformed rather than a reason to throw.
 */
export const isDateSeconds = (value: number): boolean => Math.abs(value * 1000) <= MAX_DATE_MS;

/** The license's times (`iat`, `nbf` and `exp` when present) all fit in a Date. */
export const licenseTimesFit = (claims: LicenseClaims): boolean =>
  isDateSeconds(claims.iat) &&
  isDateSeconds(claims.nbf) &&
  (claims.exp === undefined || isDateSeconds(claims.exp));

const isString = (value: unknown): value is string => typeof value === 'string';
const isNullableString = (value: unknown): boolean => value === null || isString(value);
const isSeconds = (value: unknown): boolean => Number.isSafeInteger(value);
const isNullableCount = (value: unknown): boolean => value === null || Number.isSafeInteger(value);

const POLICY_COUNTS = [
  'max_machines',
  'max_processes',
  'max_uses',
  'heartbeat_interval_seconds',
  'heartbeat_grace_seconds',
  'check_in_interval_days',
] as const;
const POLICY_STRINGS = ['id', 'name', 'overage', 'machine_matching'] as const;

/** An object whose known members have their types; members this version does not know are kept. */
function isPolicyLimits(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const p = value as Record<string, unknown>;
  return (
    POLICY_COUNTS.every((name) => p[name] === undefined || isNullableCount(p[name])) &&
    POLICY_STRINGS.every((name) => p[name] === undefined || isString(p[name])) &&
    (p['uses_reset'] === undefined || p['uses_reset'] === null || isString(p['uses_reset']))
  );
}

/**
 * A checkout file's own expiry (Unix seconds), apart from the license's: its `exp` when that comes
 * before its `valid_until`, or when the license has none. An ordinary file's `exp` is its
 * `valid_until`: undefined then.
 */
export function fileExpiryOf(claims: LicenseClaims): number | undefined {
  if (claims.exp === undefined) return undefined;
  if (claims.valid_until === null) return claims.exp;
  const validUntilMs = Date.parse(claims.valid_until);
  if (!Number.isFinite(validUntilMs)) return undefined;
  return claims.exp < Math.floor(validUntilMs / 1000) ? claims.exp : undefined;
}

/**
 * The payload as license claims, or undefined when it is not shaped like one (a JWS of another
 * issuer, or of a future format version): the same field-by-field check the service makes.
 */
export function readLicenseClaims(payload: unknown): LicenseClaims | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  const c = payload as Record<string, unknown>;
  const binding = c['hardware_binding'];
  const shaped =
    c['v'] === 1 &&
    isString(c['jti']) &&
    isString(c['sub']) &&
    isString(c['iss']) &&
    isSeconds(c['iat']) &&
    isSeconds(c['nbf']) &&
    (c['exp'] === undefined || isSeconds(c['exp'])) &&
    isString(c['product_id']) &&
    isString(c['product_code']) &&
    (LICENSE_TYPES as readonly unknown[]).includes(c['license_type']) &&
    isNullableString(c['customer_id']) &&
    isNullableString(c['customer_email']) &&
    Array.isArray(c['features']) &&
    c['features'].every(isString) &&
    Number.isSafeInteger(c['max_seats']) &&
    (binding === null ||
      (typeof binding === 'object' &&
        binding !== undefined &&
        isString((binding as { fingerprint?: unknown }).fingerprint))) &&
    isString(c['valid_from']) &&
    isNullableString(c['valid_until']) &&
    (c['entitlements'] === undefined ||
      (Array.isArray(c['entitlements']) && c['entitlements'].every(isString))) &&
    (c['fingerprint'] === undefined || isString(c['fingerprint'])) &&
    (c['policy'] === undefined || isPolicyLimits(c['policy']));
  return shaped ? (c as unknown as LicenseClaims) : undefined;
}
