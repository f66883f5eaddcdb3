import { UpdateLicenseDto, effectiveStatus } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import type { LicenseEntity } from './license.entity';

/**
 * The rules of a license PATCH, applied in memory to a locked, non-revoked license: the caller
 * loads and locks it, signs it again and saves it. Throws the DomainError the caller answers with.
 */
export function applyChanges(
  license: Pick<
    LicenseEntity,
    | 'id'
    | 'licenseType'
    | 'customerId'
    | 'customerEmail'
    | 'features'
    | 'hardwareBinding'
    | 'maxSeats'
    | 'validFrom'
    | 'validUntil'
    | 'status'
    | 'maxUses'
  >,
  changes: UpdateLicenseDto,
  now: Date,
): void {
  if (changes.customer_id !== undefined) license.customerId = changes.customer_id;
  if (changes.customer_email !== undefined) license.customerEmail = changes.customer_email;
  if (changes.features !== undefined) license.features = changes.features;
  if (changes.hardware_binding !== undefined) {
    license.hardwareBinding = changes.hardware_binding
      ? { fingerprint: changes.hardware_binding.fingerprint }
      : null;
  }
  if (changes.max_seats !== undefined) {
    if (license.licenseType === 'node_locked' && changes.max_seats !== 1) {
      throw DomainError.validation([
        { field: 'max_seats', message: 'a node_locked license has exactly one seat' },
      ]);
    }
    license.maxSeats = changes.max_seats;
  }
  // Lowering max_uses below the uses counted is allowed: further increments are refused until a reset.
  if (changes.max_uses !== undefined) license.maxUses = changes.max_uses;
  if (changes.valid_until !== undefined) {
    const validUntil = changes.valid_until === null ? null : new Date(changes.valid_until);
    if (validUntil && validUntil.getTime() < license.validFrom.getTime()) {
      throw DomainError.validation([
        { field: 'valid_until', message: 'valid_until must not be before valid_from' },
      ]);
    }
    license.validUntil = validUntil;
    // Moving the end of validity into the future makes an expired license active again.
    if (license.status === 'expired' && (validUntil === null || validUntil.getTime() > now.getTime())) {
      license.status = 'active';
    }
  }
  if (changes.status !== undefined) {
    // Judged by the effective status: an overdue license is expired even before the sweep says so.
    const current = effectiveStatus(license, now);
    if (current === 'expired') {
      throw DomainError.conflict(
        `License ${license.id} has expired; extend valid_until to change its status`,
      );
    }
    license.status = changes.status;
  }
}
