import { DomainError } from '@licensing/shared/errors';
import type { CatalogProductEntity } from '../catalog/catalog-product.entity';
import type { LicenseEntity } from '../licenses/license.entity';

/**
 * Seat arithmetic, apart from the locking and counting that ActivationsService does in PostgreSQL.
 * Which activations hold a seat is `isLapsed`'s rule (activation.mapper): one past its heartbeat
 * deadline holds none.
 */

/** The seats a license offers: its max_seats, capped by its product's max_concurrent_activations. */
export function seatLimit(
  license: Pick<LicenseEntity, 'maxSeats'>,
  product: Pick<CatalogProductEntity, 'maxConcurrentActivations'>,
): number {
  return Math.min(license.maxSeats, product.maxConcurrentActivations ?? Infinity);
}

/** Refuses one more activation when `inUse` live activations already hold every seat. */
export function ensureFreeSeat(licenseId: string, inUse: number, limit: number): void {
  if (inUse >= limit) {
    throw new DomainError('seat_limit_reached', `License ${licenseId} has all ${limit} seats in use`);
  }
}
