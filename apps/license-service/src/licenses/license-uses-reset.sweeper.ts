import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { ExclusiveJob } from '@licensing/shared/database';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { LICENSE_SERVICE_CONFIG, LicenseServiceConfig } from '../config';
import { PolicyEntity } from '../policies/policy.entity';
import { LicenseEntity } from './license.entity';
import { LicenseUsageService } from './license-usage.service';
import { usesPeriodStart } from './uses-period';

/**
 * Writes down the periodic resets of a policy's `uses_reset`: a license that still shows uses
 * counted before its current UTC period gets them back to 0 and publishes license.usage_reset, so
 * answers and analytics show the new period without waiting for an increment. Increments never
 * wait for it: they count from 0 themselves after a boundary (LicenseUsageService). Each license
 * is locked and checked again before its reset, so a reset never takes an increment of the new
 * period with it. Revoked licenses keep their last count.
 */
@Injectable()
export class LicenseUsesResetSweeper extends ExclusiveJob {
  protected readonly name = 'license-uses-reset';
  protected readonly intervalMs: number;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(LICENSE_SERVICE_CONFIG) config: LicenseServiceConfig,
    private readonly usage: LicenseUsageService,
  ) {
    super(dataSource);
    this.intervalMs = config.USES_RESET_SWEEP_MS;
  }

  protected async pass(manager: EntityManager, now: Date): Promise<number> {
    // FOR UPDATE re-reads a row that changed meanwhile and keeps it only if it is still stale.
    const stale = await manager
      .createQueryBuilder(LicenseEntity, 'l')
      .innerJoin(PolicyEntity, 'p', 'p.id = l.policy_id')
      .where('p.uses_reset IS NOT NULL')
      .andWhere('l.uses > 0')
      .andWhere(`l.status <> 'revoked'`)
      .andWhere(
        `(l.uses_period_start IS NULL OR l.uses_period_start <
           CASE p.uses_reset WHEN 'day' THEN CAST(:day AS timestamptz)
                             WHEN 'week' THEN CAST(:week AS timestamptz)
                             ELSE CAST(:month AS timestamptz) END)`,
        {
          day: usesPeriodStart('day', now),
          week: usesPeriodStart('week', now),
          month: usesPeriodStart('month', now),
        },
      )
      .orderBy('l.id', 'ASC')
      .limit(this.batchSize)
      .setLock('pessimistic_write', undefined, ['l'])
      .setOnLocked('skip_locked')
      .getMany();
    if (stale.length === 0) return 0;
    const products = new Map(
      (
        await manager.findBy(CatalogProductEntity, { id: In([...new Set(stale.map((l) => l.productId))]) })
      ).map((p) => [p.id, p]),
    );
    for (const license of stale) {
      license.product = products.get(license.productId)!;
      await this.usage.resetUses(manager, license, now);
    }
    return stale.length;
  }
}
