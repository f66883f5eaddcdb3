import { ValidationCode, effectiveStatus } from '@licensing/contracts';
import type { LicenseEntity } from '../licenses/license.entity';
import type { ActivationEntity } from './activation.entity';
import { isLapsed } from './activation.mapper';

// Validate-by-key answers the first code that applies, in this order: NOT_FOUND (no license:
// LicenseValidator's lookup), REVOKED, SUSPENDED, EXPIRED, then, when the caller names a machine,
// FINGERPRINT_MISMATCH, NO_ACTIVATION, HEARTBEAT_DEAD, COMPONENTS_MISMATCH; then, when the caller
// names entitlements, ENTITLEMENTS_MISSING; else VALID. (Policies will add OVERDUE after EXPIRED
// and OVERAGE after ENTITLEMENTS_MISSING.) The
// rules are split where the validator has to read the machine's activation, so that it reads it
// only when the license alone does not decide.

export interface ValidationRequest {
  fingerprint?: string;
  components?: Record<string, string>;
  entitlements?: string[];
}

/** The license decides (`code`), or the activation of the machine `activationOf` must be read. */
export type LicenseVerdict = { code: ValidationCode } | { activationOf: string };

export function licenseVerdict(
  license: Pick<LicenseEntity, 'status' | 'validUntil' | 'hardwareBinding'>,
  request: ValidationRequest,
  now: Date,
): LicenseVerdict {
  const status = effectiveStatus(license, now);
  if (status === 'revoked') return { code: 'REVOKED' };
  if (status === 'suspended') return { code: 'SUSPENDED' };
  if (status === 'expired') return { code: 'EXPIRED' };
  if (request.fingerprint === undefined) return { code: 'VALID' };
  if (license.hardwareBinding && license.hardwareBinding.fingerprint !== request.fingerprint) {
    return { code: 'FINGERPRINT_MISMATCH' };
  }
  return { activationOf: request.fingerprint };
}

/** The code for the machine's activation (null: it has none) of a license that passed licenseVerdict. */
export function activationCode(
  activation: Pick<ActivationEntity, 'expiresAt' | 'components'> | null,
  request: ValidationRequest,
  now: Date,
): ValidationCode {
  if (!activation) return 'NO_ACTIVATION';
  if (isLapsed(activation, now)) return 'HEARTBEAT_DEAD';
  const mismatch = Object.entries(request.components ?? {}).some(
    ([name, fingerprint]) => activation.components[name] !== fingerprint,
  );
  return mismatch ? 'COMPONENTS_MISMATCH' : 'VALID';
}

/**
 * The last rule, for a request that passed the others: every entitlement the caller names must be
 * one the license holds.
 */
export function entitlementsCode(held: readonly string[], request: ValidationRequest): ValidationCode {
  const missing = (request.entitlements ?? []).some((code) => !held.includes(code));
  return missing ? 'ENTITLEMENTS_MISSING' : 'VALID';
}
