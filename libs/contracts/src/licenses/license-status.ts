import { LicenseStatus } from './license.dto';

/**
 * The status a client is told: a stored `active` license whose validity has ended is `expired`
 * everywhere (get, list, verify, check-revocation, sync), before the periodic sweep writes it down.
 * Shared by every service that answers with a status, so they cannot disagree.
 */
export function effectiveStatus(
  license: { status: LicenseStatus; validUntil: Date | null },
  now: Date = new Date(),
): LicenseStatus {
  if (
    license.status === 'active' &&
    license.validUntil !== null &&
    license.validUntil.getTime() <= now.getTime()
  ) {
    return 'expired';
  }
  return license.status;
}
