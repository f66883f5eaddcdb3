/** The kinds of license: the one list, used by the file format, the API's validation and the database. */
export const LICENSE_TYPES = Object.freeze([
  'perpetual',
  'subscription',
  'trial',
  'node_locked',
  'floating',
] as const);
export type LicenseType = (typeof LICENSE_TYPES)[number];

export interface HardwareBinding {
  fingerprint: string;
}

/**
 * The limits of the license's policy, as a checkout file carries them (claim `policy`). Every
 * member is optional: a verifier reads what is there and ignores what it does not know.
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

/**
 * A relay file's claim `relay`: the relay it is issued to. `id` is the relay file's id (the `kid` of
 * the relay's reports), `public_key` the relay's Ed25519 key as a PEM SPKI block.
 */
export interface RelayClaim {
  id: string;
  site: string;
  public_key: string;
}

/** The JSON payload of a license file (docs/api.md). Times are Unix seconds. */
export interface LicenseClaims {
  v: 1;
  jti: string;
  /** The serial. */
  sub: string;
  /** The organization id. */
  iss: string;
  iat: number;
  nbf: number;
  /** Absent, not null, for a license that never expires. */
  exp?: number;
  product_id: string;
  product_code: string;
  license_type: LicenseType;
  customer_id: string | null;
  customer_email: string | null;
  features: string[];
  max_seats: number;
  hardware_binding: HardwareBinding | null;
  valid_from: string;
  valid_until: string | null;
  /** The license's entitlement codes, sorted; absent, not empty, when it has none. */
  entitlements?: string[];
  /** A checkout file of an activation: the machine it is bound to. */
  fingerprint?: string;
  /** A checkout file: the limits of the license's policy when it was signed. */
  policy?: PolicyLimits;
  /** A relay file: the relay it is issued to. */
  relay?: RelayClaim;
}

export interface BuildClaimsInput {
  licenseId: string;
  serial: string;
  orgId: string;
  productId: string;
  productCode: string;
  licenseType: LicenseType;
  customerId: string | null;
  customerEmail: string | null;
  features: string[];
  maxSeats: number;
  hardwareBinding: HardwareBinding | null;
  validFrom: Date;
  validUntil: Date | null;
  issuedAt: Date;
  /** Sorted entitlement codes; none gives no claim, so files of such licenses stay as they were. */
  entitlements?: readonly string[];
}

export function buildClaims(input: BuildClaimsInput): LicenseClaims {
  const nbf = unixSeconds(input.validFrom, 'validFrom');
  const iat = unixSeconds(input.issuedAt, 'issuedAt');
  const exp = input.validUntil === null ? undefined : unixSeconds(input.validUntil, 'validUntil');
  // Property order follows docs/api.md (License file format), so the signed JSON reads as documented.
  return {
    v: 1,
    jti: input.licenseId,
    sub: input.serial,
    iss: input.orgId,
    iat,
    nbf,
    // Spread so that a perpetual license has no exp key at all rather than an undefined one.
    ...(exp === undefined ? {} : { exp }),
    product_id: input.productId,
    product_code: input.productCode,
    license_type: input.licenseType,
    customer_id: input.customerId,
    customer_email: input.customerEmail,
    // Copies, so a caller mutating its own arrays/objects after signing cannot skew the claims.
    features: [...input.features],
    max_seats: input.maxSeats,
    hardware_binding:
      input.hardwareBinding === null ? null : { fingerprint: input.hardwareBinding.fingerprint },
    valid_from: input.validFrom.toISOString(),
    valid_until: input.validUntil === null ? null : input.validUntil.toISOString(),
    ...(input.entitlements?.length ? { entitlements: [...input.entitlements] } : {}),
  };
}

/** What a checkout adds to a license's claims. */
export interface CheckoutInput {
  /** When the file stops verifying. Capped at the license's `valid_until`. */
  expiresAt: Date;
  /** An activation's checkout: the machine the file is bound to. */
  fingerprint?: string;
}

/**
 * Claims a checkout may carry beside the license's own. `policy` goes here once licenses have
 * policies: the caller passes the policy's limits, and this function stays as it is.
 */
export interface CheckoutExtraClaims {
  policy?: PolicyLimits;
  /** A relay file: the relay it is issued to, the last claim. */
  relay?: RelayClaim;
}

/**
 * The claims of a checkout file: the license's claims, signed now (`iat`), with `exp` the file's own
 * expiry. `exp` never passes `valid_until`: a file cannot outlive its license. The file is a
 * checkout because its `exp` comes before its `valid_until`, or because the license is perpetual
 * (see `fileExpiryOf`). When the cap applies, `exp` is the license's end, as in an ordinary file.
 */
export function buildCheckoutClaims(
  license: BuildClaimsInput,
  checkout: CheckoutInput,
  extra: CheckoutExtraClaims = {},
): LicenseClaims {
  const { v, jti, sub, iss, iat, nbf, exp: licenseExp, ...rest } = buildClaims(license);
  const fileExp = unixSeconds(checkout.expiresAt, 'expiresAt');
  const exp = licenseExp === undefined ? fileExp : Math.min(licenseExp, fileExp);
  // Property order as in an ordinary file; the checkout's own claims come last.
  return {
    v,
    jti,
    sub,
    iss,
    iat,
    nbf,
    exp,
    ...rest,
    ...(checkout.fingerprint === undefined ? {} : { fingerprint: checkout.fingerprint }),
    ...(extra.policy === undefined ? {} : { policy: { ...extra.policy } }),
    ...(extra.relay === undefined
      ? {}
      : { relay: { id: extra.relay.id, site: extra.relay.site, public_key: extra.relay.public_key } }),
  };
}

/**
 * The file's own expiry, in Unix seconds, when it has one apart from the license's: a checkout file's
 * `exp` when it comes before the license's `valid_until`, or when the license has none. An ordinary
 * file's `exp` is its `valid_until`, and this returns undefined for it.
 */
export function fileExpiryOf(claims: TimedClaims): number | undefined {
  if (typeof claims.exp !== 'number' || claims.valid_until === undefined) return undefined;
  if (claims.valid_until === null) return claims.exp;
  const validUntilMs = Date.parse(claims.valid_until);
  // An unreadable valid_until leaves exp as the license's end, as before checkouts existed.
  if (!Number.isFinite(validUntilMs)) return undefined;
  return claims.exp < Math.floor(validUntilMs / 1000) ? claims.exp : undefined;
}

export type TimeProblem = 'not_yet_valid' | 'expired' | 'file_expired';

/** The claims that say when a file is valid. Without `valid_until`, `exp` is the license's end. */
export type TimedClaims = Pick<LicenseClaims, 'nbf' | 'exp'> & { valid_until?: string | null };

/**
 * No leeway: the service treats valid_from and valid_until as hard boundaries (docs/api.md), and
 * tolerating a skewed client clock is a decision for whoever verifies offline, not for the format.
 * `expired` is the license's end; `file_expired` is a checkout file's own end (renew it).
 */
export function timeProblems(claims: TimedClaims, now: Date): TimeProblem[] {
  const nowMs = now.getTime();
  const problems: TimeProblem[] = [];
  if (claims.nbf * 1000 > nowMs) {
    problems.push('not_yet_valid');
  }
  const fileExp = fileExpiryOf(claims);
  const licenseEnd = fileExp === undefined ? claims.exp : secondsOf(claims.valid_until);
  if (licenseEnd !== undefined && licenseEnd * 1000 <= nowMs) {
    problems.push('expired');
  }
  if (fileExp !== undefined && fileExp * 1000 <= nowMs) {
    problems.push('file_expired');
  }
  return problems;
}

const secondsOf = (iso: string | null | undefined): number | undefined =>
  typeof iso === 'string' ? Math.floor(Date.parse(iso) / 1000) : undefined;

function unixSeconds(date: Date, field: string): number {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) {
    throw new RangeError(`${field} is not a valid date`);
  }
  return Math.floor(ms / 1000);
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isNullableString = (value: unknown): value is string | null => value === null || isString(value);
const isSeconds = (value: unknown): value is number => Number.isSafeInteger(value);
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
function isPolicyLimits(value: unknown): value is PolicyLimits {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const p = value as Record<string, unknown>;
  return (
    POLICY_COUNTS.every((name) => p[name] === undefined || isNullableCount(p[name])) &&
    POLICY_STRINGS.every((name) => p[name] === undefined || isString(p[name])) &&
    (p['uses_reset'] === undefined || p['uses_reset'] === null || isString(p['uses_reset']))
  );
}

/**
 * The payload as license claims, or undefined when it is not shaped like one (a JWS from some
 * other issuer, or a payload from an unknown future version). Checked field by field, because
 * what arrives here comes from a client and may have been written by anyone.
 */
export function readLicenseClaims(payload: unknown): LicenseClaims | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  const c = payload as Record<string, unknown>;
  const binding = c.hardware_binding;
  const shaped =
    c.v === 1 &&
    isString(c.jti) &&
    isString(c.sub) &&
    isString(c.iss) &&
    isSeconds(c.iat) &&
    isSeconds(c.nbf) &&
    (c.exp === undefined || isSeconds(c.exp)) &&
    isString(c.product_id) &&
    isString(c.product_code) &&
    LICENSE_TYPES.includes(c.license_type as LicenseType) &&
    isNullableString(c.customer_id) &&
    isNullableString(c.customer_email) &&
    Array.isArray(c.features) &&
    c.features.every(isString) &&
    Number.isSafeInteger(c.max_seats) &&
    (binding === null ||
      (typeof binding === 'object' &&
        binding !== undefined &&
        isString((binding as HardwareBinding).fingerprint))) &&
    isString(c.valid_from) &&
    isNullableString(c.valid_until) &&
    (c.entitlements === undefined || (Array.isArray(c.entitlements) && c.entitlements.every(isString))) &&
    (c.fingerprint === undefined || isString(c.fingerprint)) &&
    (c.policy === undefined || isPolicyLimits(c.policy));
  return shaped ? (c as unknown as LicenseClaims) : undefined;
}
