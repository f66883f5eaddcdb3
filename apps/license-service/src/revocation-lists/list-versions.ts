import { EntityManager, In } from 'typeorm';
import { LicenseEntity } from '../licenses/license.entity';
import { RevocationListEntity } from './revocation-list.entity';

/**
 * Records, in the caller's transaction, that these licenses' statuses changed: their products'
 * list versions are bumped, and each license remembers the version and time of its change. The
 * counter row stays locked until the transaction ends, so versions are handed out in commit
 * order: whoever reads version N in a snapshot also sees every change numbered N or less. Products
 * are taken in id order, so two callers bumping the same products cannot deadlock.
 */
export async function bumpListVersions(
  manager: EntityManager,
  licenses: LicenseEntity[],
  now: Date,
): Promise<void> {
  const byProduct = new Map<string, LicenseEntity[]>();
  for (const license of licenses) {
    byProduct.set(license.productId, [...(byProduct.get(license.productId) ?? []), license]);
  }
  const table = manager.getRepository(RevocationListEntity).metadata.tablePath;
  for (const productId of [...byProduct.keys()].sort()) {
    const changed = byProduct.get(productId)!;
    const [{ version }] = (await manager.query(
      `INSERT INTO ${table} (product_id, org_id, version, updated_at) VALUES ($1, $2, 1, $3)
       ON CONFLICT (product_id) DO UPDATE SET version = ${table}.version + 1, updated_at = $3
       RETURNING version`,
      [productId, changed[0].orgId, now],
    )) as { version: string }[];
    await manager.update(
      LicenseEntity,
      { id: In(changed.map((license) => license.id)) },
      { listVersion: version, listChangedAt: now },
    );
    for (const license of changed) Object.assign(license, { listVersion: version, listChangedAt: now });
  }
}

/**
 * Moves a product's list version forward by `by` at once, and numbers these licenses' entries with
 * the new version. For a database restored from a backup: its lists must read as newer than any
 * list published before the restore, whose versions ran up to `by` past the backup's.
 */
export async function advanceListVersion(
  manager: EntityManager,
  product: { id: string; orgId: string },
  by: number,
  licenses: LicenseEntity[],
  now: Date,
): Promise<void> {
  const table = manager.getRepository(RevocationListEntity).metadata.tablePath;
  const [{ version }] = (await manager.query(
    `INSERT INTO ${table} (product_id, org_id, version, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (product_id) DO UPDATE SET version = ${table}.version + $3, updated_at = $4
     RETURNING version`,
    [product.id, product.orgId, by, now],
  )) as { version: string }[];
  if (licenses.length === 0) return;
  await manager.update(
    LicenseEntity,
    { id: In(licenses.map((license) => license.id)) },
    { listVersion: version, listChangedAt: now },
  );
}
