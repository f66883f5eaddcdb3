import { EntityManager, In } from 'typeorm';
import { DomainError } from '@licensing/shared/errors';
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
  const byLicense = codesByOwner(rows.map(({ license_id, code }) => [license_id, code]));
  for (const license of licenses) license.entitlements = byLicense.get(license.id) ?? [];
}

/** The codes of each owner (a license, a policy), sorted: `[owner id, code]` pairs in any order. */
export function codesByOwner(pairs: Array<[string, string]>): Map<string, string[]> {
  const byOwner = new Map<string, string[]>();
  for (const [owner, code] of pairs) byOwner.set(owner, [...(byOwner.get(owner) ?? []), code]);
  for (const [owner, codes] of byOwner) byOwner.set(owner, sortCodes(codes));
  return byOwner;
}

/**
 * The organization's entitlements of `codes`, each locked FOR SHARE, so that a concurrent delete
 * waits and then sees it in use. Unknown codes: `422 unknown_entitlement` naming them.
 */
export async function lockEntitlements(
  manager: EntityManager,
  orgId: string,
  codes: string[],
): Promise<EntitlementEntity[]> {
  const wanted = sortCodes(codes);
  if (wanted.length === 0) return [];
  const entitlements = await manager.find(EntitlementEntity, {
    where: { orgId, code: In(wanted) },
    lock: { mode: 'pessimistic_read' },
  });
  const known = new Set(entitlements.map((entitlement) => entitlement.code));
  const unknown = wanted.filter((code) => !known.has(code));
  if (unknown.length > 0) {
    throw new DomainError(
      'unknown_entitlement',
      `No entitlement of the organization has the code${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`,
    );
  }
  return entitlements;
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
