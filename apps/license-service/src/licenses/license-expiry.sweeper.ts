import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, LessThanOrEqual } from 'typeorm';
import { ExclusiveJob } from '@licensing/shared/database';
import { recordEvent } from '@licensing/shared/events';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { bumpListVersions } from '../revocation-lists/list-versions';
import { LICENSE_SERVICE_CONFIG, LicenseServiceConfig } from '../config';
import { LicenseEntity } from './license.entity';
import { loadEntitlements } from '../entitlements/license-entitlements';
import { toLicenseView } from './license.mapper';
import { toSerialStatus } from './serial-statuses.service';

/**
 * Writes down what every read already reports: an active license past its valid_until is expired.
 * Publishes license.expired for each. Clients never wait for it, since the effective status is
 * computed on every read; it exists for the stored state, for subscribers and for the products'
 * revocation lists, which list an expired license (and bump their version) from this pass on:
 * at most LICENSE_EXPIRY_SWEEP_MS after valid_until, plus a pass per batch of a backlog.
 */
@Injectable()
export class LicenseExpirySweeper extends ExclusiveJob {
  protected readonly name = 'license-expiry';
  protected readonly intervalMs: number;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(LICENSE_SERVICE_CONFIG) config: LicenseServiceConfig,
  ) {
    super(dataSource);
    this.intervalMs = config.LICENSE_EXPIRY_SWEEP_MS;
  }

  protected async pass(manager: EntityManager, now: Date): Promise<number> {
    const overdue = await manager.find(LicenseEntity, {
      where: { status: 'active', validUntil: LessThanOrEqual(now) },
      order: { validUntil: 'ASC' },
      take: this.batchSize,
      lock: { mode: 'pessimistic_write', onLocked: 'skip_locked' },
    });
    if (overdue.length === 0) return 0;
    await manager.update(
      LicenseEntity,
      { id: In(overdue.map((l) => l.id)) },
      { status: 'expired', updatedAt: now },
    );
    await bumpListVersions(manager, overdue, now);
    const products = new Map(
      (
        await manager.findBy(CatalogProductEntity, { id: In([...new Set(overdue.map((l) => l.productId))]) })
      ).map((p) => [p.id, p]),
    );
    await loadEntitlements(manager, overdue);
    for (const license of overdue) {
      Object.assign(license, { status: 'expired', updatedAt: now });
      await recordEvent(manager, {
        type: 'license.expired',
        orgId: license.orgId,
        data: toLicenseView(license, products.get(license.productId)!, { withBlob: false }),
        occurredAt: now,
        serialStatus: toSerialStatus(license),
      });
    }
    return overdue.length;
  }
}
