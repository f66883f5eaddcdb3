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

export type TimeProblem = 'not_yet_valid' | 'expired';

/**
 * No leeway: the service treats valid_from and valid_until as hard boundaries (docs/api.md), and
 * tolerating a skewed client clock is a decision for whoever verifies offline, not for the format.
 */
export function timeProblems(claims: Pick<LicenseClaims, 'nbf' | 'exp'>, now: Date): TimeProblem[] {
  const nowMs = now.getTime();
  const problems: TimeProblem[] = [];
  if (claims.nbf * 1000 > nowMs) {
    problems.push('not_yet_valid');
  }
  if (typeof claims.exp === 'number' && claims.exp * 1000 <= nowMs) {
    problems.push('expired');
  }
  return problems;
}

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
    (c.entitlements === undefined || (Array.isArray(c.entitlements) && c.entitlements.every(isString)));
  return shaped ? (c as unknown as LicenseClaims) : undefined;
}
