import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { LicenseView } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { LicenseEntity } from '../licenses/license.entity';
import { LicenseSigner } from '../licenses/license-signer.service';
import { toLicenseView } from '../licenses/license.mapper';
import { recordLicenseChange } from '../licenses/record-license-change';
import { EntitlementEntity } from './entitlement.entity';
import { LicenseEntitlementEntity } from './license-entitlement.entity';
import { loadEntitlements, lockEntitlements } from './license-entitlements';

/**
 * Attaches entitlements to a license and detaches them. A change signs the license again, so the
 * next download carries the new `entitlements` claim; files handed out before keep theirs.
 *
 * These change the license's own entitlements only. Detaching a code that the license also holds
 * through its policy changes nothing it answers: the policy still grants it. Attaching one records
 * it as the license's own, so that it stays when the policy stops granting it.
 */
@Injectable()
export class LicenseEntitlementsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly signer: LicenseSigner,
  ) {}

  attach(orgId: string, licenseId: string, codes: string[]): Promise<LicenseView> {
    return this.change(orgId, licenseId, codes, async (manager, license, entitlements) => {
      const now = new Date();
      await manager
        .createQueryBuilder()
        .insert()
        .into(LicenseEntitlementEntity)
        .values(
          entitlements.map((entitlement) => ({
            licenseId: license.id,
            entitlementId: entitlement.id,
            orgId,
            createdAt: now,
          })),
        )
        .orIgnore()
        .execute();
    });
  }

  detach(orgId: string, licenseId: string, codes: string[]): Promise<LicenseView> {
    return this.change(orgId, licenseId, codes, async (manager, license, entitlements) => {
      await manager.delete(LicenseEntitlementEntity, {
        licenseId: license.id,
        entitlementId: In(entitlements.map((entitlement) => entitlement.id)),
      });
    });
  }

  /**
   * Locks the license, resolves `codes` in the catalog (each entitlement locked FOR SHARE, so that
   * a concurrent delete waits and then sees it in use), applies `apply`, and when the license's
   * entitlements changed, signs it again and records `license.updated` with its audit entry. A
   * change that changes nothing records nothing.
   */
  private async change(
    orgId: string,
    licenseId: string,
    codes: string[],
    apply: (
      manager: EntityManager,
      license: LicenseEntity,
      entitlements: EntitlementEntity[],
    ) => Promise<void>,
  ): Promise<LicenseView> {
    const { license, product } = await this.dataSource.transaction(async (manager) => {
      const license = await manager.findOne(LicenseEntity, {
        where: { id: licenseId, orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!license) throw DomainError.notFound('License', licenseId);
      if (license.status === 'revoked') {
        throw DomainError.conflict(`License ${licenseId} is revoked and cannot change`);
      }
      const entitlements = await lockEntitlements(manager, orgId, codes);
      const product = await manager.findOneByOrFail(CatalogProductEntity, { id: license.productId });
      await loadEntitlements(manager, [license]);
      const before = toLicenseView(license, product, { withBlob: false });
      await apply(manager, license, entitlements);
      await loadEntitlements(manager, [license]);
      if (before.entitlements.join(' ') === license.entitlements!.join(' ')) return { license, product };

      const now = new Date();
      license.updatedAt = now;
      await this.signer.sign(manager, license, product, now);
      await manager.update(
        LicenseEntity,
        { id: license.id },
        { jws: license.jws, keyPairId: license.keyPairId, updatedAt: now },
      );
      const data = toLicenseView(license, product, { withBlob: false });
      await recordLicenseChange(manager, license, {
        type: 'license.updated',
        action: 'updated',
        before,
        data,
        now,
      });
      return { license, product };
    });
    return toLicenseView(license, product, { withBlob: true });
  }
}
