import { LicenseStatus } from '@licensing/contracts';

/**
 * The status a client is told: a stored `active` license whose validity has ended is `expired`
 * everywhere, before the periodic sweep gets round to writing it down.
 */
export function effectiveStatus(
  license: { status: LicenseStatus; validUntil: Date | null },
  now: Date = new Date(),
): LicenseStatus {
  if (license.status === 'active' && license.validUntil !== null && license.validUntil.getTime() <= now.getTime()) {
    return 'expired';
  }
  return license.status;
}
