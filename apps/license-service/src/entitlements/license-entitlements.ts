import { EntityManager } from 'typeorm';
import { LicenseEntity } from '../licenses/license.entity';
import { PolicyEntitlementEntity } from '../policies/policy-entitlement.entity';
import { EntitlementEntity } from './entitlement.entity';
import { LicenseEntitlementEntity } from './license-entitlement.entity';

/**
 * Sets `entitlements` on each license: its policy's codes and its own, sorted by code point (the
 * order of the license file's claim). One query for the whole batch, so every reader (answers,
 * files, events) gets the union as the database holds it now.
 */
export async function loadEntitlements(manager: EntityManager, licenses: LicenseEntity[]): Promise<void> {
  if (licenses.length === 0) return;
  const rows = (await manager.query(licenseEntitlementsSql(manager), [
    licenses.map((license) => license.id),
  ])) as { license_id: string; code: string }[];
  const byLicense = new Map<string, string[]>();
  for (const { license_id, code } of rows) {
    byLicense.set(license_id, [...(byLicense.get(license_id) ?? []), code]);
  }
  for (const license of licenses) license.entitlements = sortCodes(byLicense.get(license.id) ?? []);
}

/** The codes of the licenses $1 (uuid[]) hold themselves or through their policy. */
function licenseEntitlementsSql(manager: EntityManager): string {
  const table = (entity: new () => object) => manager.connection.getMetadata(entity).tablePath;
  return `SELECT le.license_id, e.code
            FROM ${table(LicenseEntitlementEntity)} le
            JOIN ${table(EntitlementEntity)} e ON e.id = le.entitlement_id
           WHERE le.license_id = ANY ($1::uuid[])
          UNION
          SELECT l.id AS license_id, e.code
            FROM ${table(LicenseEntity)} l
            JOIN ${table(PolicyEntitlementEntity)} pe ON pe.policy_id = l.policy_id
            JOIN ${table(EntitlementEntity)} e ON e.id = pe.entitlement_id
           WHERE l.id = ANY ($1::uuid[])`;
}

/** Code-point order, whatever the database's collation: codes are ASCII. */
export function sortCodes(codes: Iterable<string>): string[] {
  return [...new Set(codes)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
