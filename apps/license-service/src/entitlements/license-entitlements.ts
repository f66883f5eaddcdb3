import { EntityManager } from 'typeorm';
import type { LicenseEntity } from '../licenses/license.entity';
import { EntitlementEntity } from './entitlement.entity';
import { LicenseEntitlementEntity } from './license-entitlement.entity';

/**
 * Sets `entitlements` on each license: its codes, sorted by code point (the order of the license
 * file's claim). One query for the whole batch. Here the policy's entitlements will join the
 * license's own, so that every reader gets the union.
 */
export async function loadEntitlements(manager: EntityManager, licenses: LicenseEntity[]): Promise<void> {
  if (licenses.length === 0) return;
  const rows = await manager
    .createQueryBuilder(LicenseEntitlementEntity, 'le')
    .innerJoin(EntitlementEntity, 'e', 'e.id = le.entitlement_id')
    .select('le.license_id', 'license_id')
    .addSelect('e.code', 'code')
    .where('le.license_id IN (:...ids)', { ids: licenses.map((license) => license.id) })
    .getRawMany<{ license_id: string; code: string }>();
  const byLicense = new Map<string, string[]>();
  for (const { license_id, code } of rows) {
    byLicense.set(license_id, [...(byLicense.get(license_id) ?? []), code]);
  }
  for (const license of licenses) license.entitlements = sortCodes(byLicense.get(license.id) ?? []);
}

/** Code-point order, whatever the database's collation: codes are ASCII. */
export function sortCodes(codes: Iterable<string>): string[] {
  return [...new Set(codes)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
