import { MachineMatchingRule, ValidationCode, effectiveStatus } from '@licensing/contracts';
import type { LicenseEntity } from '../licenses/license.entity';
import { componentsMatch } from '../policies/license-terms';
import type { ActivationEntity } from './activation.entity';
import { isLapsed } from './activation.mapper';

// Validate-by-key answers the first code that applies, in this order: NOT_FOUND (no license:
// LicenseValidator's lookup), REVOKED, SUSPENDED, EXPIRED, OVERDUE, then, when the caller names a
// machine, FINGERPRINT_MISMATCH, NO_ACTIVATION, HEARTBEAT_DEAD, COMPONENTS_MISMATCH; then, when the
// caller names entitlements, ENTITLEMENTS_MISSING; then OVERAGE (still valid); else VALID. The
// rules are split where the validator has to read the machine's activation, so that it reads it
// only when the license alone does not decide; both paths end with `finalCode`.

const DAY_MS = 86_400_000;

export interface ValidationRequest {
  fingerprint?: string;
  components?: Record<string, string>;
  entitlements?: string[];
}

/**
 * What validate needs of the license's policy, read in the same query as the license: null for a
 * license without one, which keeps the rules of a plain license.
 */
export interface PolicyLimits {
  checkInIntervalDays: number | null;
  machineMatching: MachineMatchingRule;
  /** The activations that hold a seat of the license (in the grace too). */
  machinesInUse: number;
}

type LicenseFacts = Pick<
  LicenseEntity,
  'status' | 'validUntil' | 'hardwareBinding' | 'createdAt' | 'lastCheckInAt' | 'maxSeats' | 'entitlements'
>;

/** The license decides (`code`), or the activation of the machine `activationOf` must be read. */
type LicenseVerdict = { code: ValidationCode } | { activationOf: string };

export function licenseVerdict(
  license: LicenseFacts,
  policy: PolicyLimits | null,
  request: ValidationRequest,
  now: Date,
): LicenseVerdict {
  const status = effectiveStatus(license, now);
  if (status === 'revoked') return { code: 'REVOKED' };
  if (status === 'suspended') return { code: 'SUSPENDED' };
  if (status === 'expired') return { code: 'EXPIRED' };
  if (isOverdue(license, policy, now)) return { code: 'OVERDUE' };
  if (request.fingerprint === undefined) return { code: finalCode(license, policy, request) };
  if (license.hardwareBinding && license.hardwareBinding.fingerprint !== request.fingerprint) {
    return { code: 'FINGERPRINT_MISMATCH' };
  }
  return { activationOf: request.fingerprint };
}

/** The code for the machine's activation (null: it has none) of a license that passed licenseVerdict. */
export function activationCode(
  license: LicenseFacts,
  policy: PolicyLimits | null,
  activation: Pick<ActivationEntity, 'expiresAt' | 'components'> | null,
  request: ValidationRequest,
  now: Date,
): ValidationCode {
  if (!activation) return 'NO_ACTIVATION';
  if (isLapsed(activation, now)) return 'HEARTBEAT_DEAD';
  // Components are compared only when the request gives some.
  const { components } = request;
  if (components && !componentsMatch(activation.components, components, policy?.machineMatching ?? null)) {
    return 'COMPONENTS_MISMATCH';
  }
  return finalCode(license, policy, request);
}

/**
 * A check-in is due every `check_in_interval_days`, counted from the last one (from the license's
 * creation before the first).
 */
function isOverdue(license: LicenseFacts, policy: PolicyLimits | null, now: Date): boolean {
  if (!policy || policy.checkInIntervalDays === null) return false;
  const since = (license.lastCheckInAt ?? license.createdAt).getTime();
  return since + policy.checkInIntervalDays * DAY_MS < now.getTime();
}

/**
 * The last rules, for a request that passed the others: ENTITLEMENTS_MISSING when the caller names
 * an entitlement the license does not hold; then OVERAGE when the license holds more machines than
 * its max_seats (its policy let it); else VALID.
 */
function finalCode(
  license: LicenseFacts,
  policy: PolicyLimits | null,
  request: ValidationRequest,
): ValidationCode {
  const held = license.entitlements ?? [];
  if ((request.entitlements ?? []).some((code) => !held.includes(code))) return 'ENTITLEMENTS_MISSING';
  return policy && policy.machinesInUse > license.maxSeats ? 'OVERAGE' : 'VALID';
}
