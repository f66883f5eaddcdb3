import type { OverageRule } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { overageCeiling } from '../policies/license-terms';
import type { CatalogProductEntity } from '../catalog/catalog-product.entity';
import type { LicenseEntity } from '../licenses/license.entity';

/**
 * Seat arithmetic, apart from the locking and counting that ActivationsService does in PostgreSQL.
 * Which activations hold a seat is `isLapsed`'s rule (activation.mapper): one past its heartbeat
 * deadline holds none.
 */

/**
 * The seats a license offers: its max_seats, raised by its policy's overage (`floor(max_seats ×
 * factor)`, or no ceiling), and capped by its product's max_concurrent_activations in any case.
 */
export function seatLimit(
  license: Pick<LicenseEntity, 'maxSeats'>,
  product: Pick<CatalogProductEntity, 'maxConcurrentActivations'>,
  overage: OverageRule = 'none',
): number {
  return Math.min(overageCeiling(license.maxSeats, overage), product.maxConcurrentActivations ?? Infinity);
}

/** Refuses one more activation when `inUse` live activations already hold every seat. */
export function ensureFreeSeat(licenseId: string, inUse: number, limit: number): void {
  if (inUse >= limit) {
    throw new DomainError('seat_limit_reached', `License ${licenseId} has all ${limit} seats in use`);
  }
}

/** The window of the per-license cap on new activations. */
export const ACTIVATION_WINDOW_MS = 86_400_000;

/**
 * How many activations a license may be granted in any 24 h, online and air-gapped together: three
 * times its seats, and at least 10. An honest fleet re-imaging its machines stays far below it; a
 * loop of activate-and-release meets it at once.
 */
function activationCap(license: Pick<LicenseEntity, 'maxSeats'>): number {
  return Math.max(10, 3 * license.maxSeats);
}

/**
 * Refuses one more activation when `granted` activations were created in the window; the oldest of
 * them, `oldest`, says when a grant frees up.
 */
export function ensureUnderActivationCap(
  license: Pick<LicenseEntity, 'id' | 'maxSeats'>,
  granted: number,
  oldest: Date | null,
  now: Date,
): void {
  const cap = activationCap(license);
  if (granted < cap) return;
  const freedAt = (oldest?.getTime() ?? now.getTime()) + ACTIVATION_WINDOW_MS;
  throw DomainError.rateLimited(
    `License ${license.id} was activated ${granted} times in 24 h, its cap of ${cap}; ` +
      'release and re-activation cannot go beyond it',
    (freedAt - now.getTime()) / 1000,
  );
}
