import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { LicenseUsesView, effectiveStatus } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { preparedStatement } from '@licensing/shared/database';
import {
  OutboxEventEntity,
  OutboxRelay,
  eventRow,
  outboxChannel,
  outboxTraceContext,
} from '@licensing/shared/events';
import { CredentialReach } from '@licensing/shared/logging';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { loadEntitlements } from '../entitlements/license-entitlements';
import { LicenseEntity } from './license.entity';
import { toLicenseView } from './license.mapper';
import { toSerialStatus } from './serial-statuses.service';
import { usesAreStale, usesPeriodStart } from './uses-period';
import { PolicyEntity } from '../policies/policy.entity';
import { recordLicenseChange } from './record-license-change';

/** An increment is tried again when the license or its policy changed between its read and its write. */
const INCREMENT_ATTEMPTS = 5;

/**
 * Metered usage: a license's `uses` against its `max_uses`. An increment is one conditional UPDATE
 * that adds only while the sum stays within the limit and the license is active, so concurrent
 * increments never pass the limit and a refused one changes nothing. Each accepted increment is
 * published (`license.usage_incremented`) by the same statement, and the analytics service counts it.
 *
 * Periodic resets (a policy's `uses_reset`: day, week or month, UTC) are lazy and exact: the same
 * statement counts from 0 when the license's count began before the current period
 * (`uses_period_start`), and moves `uses_period_start` to the period's start. The row lock orders
 * it with every other write of the license, so no increment counts against the previous period
 * after the boundary, and none is lost to a reset. The uses-reset sweeper (`resetUses`) writes the
 * reset down for licenses that count nothing in the new period, so that answers show 0.
 */
@Injectable()
export class LicenseUsageService {
  /** The increment and its event in one statement: see `increment`. Returns one row when it counted. */
  private readonly incrementStatement: (
    values: unknown[],
  ) => Promise<{ uses: string; max_uses: string | null }[]>;
  private readonly outboxChannel: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly relay: OutboxRelay,
  ) {
    const table = (entity: new () => object) => dataSource.getMetadata(entity).tablePath;
    this.outboxChannel = outboxChannel((dataSource.options as { schema?: string }).schema);
    // The uses began before the current period: they count as 0 (usesAreStale).
    const stale = `($12::timestamptz IS NOT NULL
                    AND (l.uses_period_start IS NULL OR l.uses_period_start < $12::timestamptz))`;
    // The license as it was read ($4: its updated_at) with its policy as read ($13: its updated_at;
    // null without a policy), still active at $5 and within max_uses after the increment ($3); its
    // uses count from 0 when they began before the current period ($12; null: no reset). Then its
    // event, whose data.uses is the total the UPDATE returned, and the outbox's notification ($10,
    // unless this process's relay is told directly). Nothing is written unless the license row
    // matched. The row is locked only for this one statement.
    this.incrementStatement = preparedStatement(
      dataSource,
      'license-usage-increment',
      `WITH license AS (
         UPDATE ${table(LicenseEntity)} l
            SET uses = (CASE WHEN ${stale} THEN 0 ELSE l.uses END) + $3::bigint,
                uses_period_start = CASE WHEN ${stale} THEN $12::timestamptz ELSE l.uses_period_start END
          WHERE l.id = $1::uuid AND l.org_id = $2::uuid AND l.updated_at = $4::timestamptz
            AND l.status = 'active' AND (l.valid_until IS NULL OR l.valid_until > $5::timestamptz)
            AND (l.max_uses IS NULL OR (CASE WHEN ${stale} THEN 0 ELSE l.uses END) + $3::bigint <= l.max_uses)
            AND ($13::timestamptz IS NULL OR EXISTS (
                  SELECT 1 FROM ${table(PolicyEntity)} p
                   WHERE p.id = l.policy_id AND p.updated_at = $13::timestamptz))
         RETURNING l.uses, l.max_uses
       ), outbox AS (
         INSERT INTO ${table(OutboxEventEntity)} (id, subject, payload, trace_context, created_at)
         SELECT $6::uuid, $7::varchar, jsonb_set($8::jsonb, '{data,uses}', to_jsonb(license.uses))::text,
                $9::text, now()
           FROM license
         RETURNING 1
       )
       SELECT license.uses, license.max_uses, CASE WHEN $11::boolean THEN pg_notify($10, '') END AS notified
         FROM license, outbox`,
    );
  }

  /**
   * Reads the license and its policy, refuses at once what it cannot count (not active, or past
   * max_uses as read: uses only grow within a period), then counts in one statement guarded by the
   * reads' updated_at. A statement that matched nothing means the license or its policy changed
   * since the read: read them again.
   */
  async increment(
    orgId: string,
    id: string,
    increment: number,
    reach: CredentialReach,
  ): Promise<LicenseUsesView> {
    // A license token reaches its own license only; any other is answered as another organization's.
    if (reach.kind === 'license' && reach.license_id !== id) throw DomainError.notFound('License', id);
    for (let attempt = 1; attempt <= INCREMENT_ATTEMPTS; attempt++) {
      const now = new Date();
      const license = await this.dataSource.getRepository(LicenseEntity).findOne({
        where: { id, orgId },
        relations: { product: true, policy: true },
      });
      if (!license) throw DomainError.notFound('License', id);
      const status = effectiveStatus(license, now);
      if (status !== 'active') {
        throw new DomainError('license_not_active', `License ${id} is ${status}: it cannot count uses`);
      }
      const periodStart = usesPeriodStart(license.policy?.usesReset ?? null, now);
      if (usesAreStale(license.usesPeriodStart, periodStart)) license.uses = 0;
      if (license.maxUses !== null && license.uses + increment > license.maxUses) {
        throw new DomainError(
          'usage_limit_exceeded',
          `License ${id} has counted ${license.uses} of its ${license.maxUses} uses: ` +
            `${increment} more would pass max_uses`,
        );
      }
      await loadEntitlements(this.dataSource.manager, [license]);
      const view = toLicenseView(license, license.product!, { withBlob: false });
      const { row: event } = eventRow({
        type: 'license.usage_incremented',
        orgId,
        // `uses` is replaced by the total the statement returns.
        data: { ...view, uses: license.uses + increment, increment },
        occurredAt: now,
        serialStatus: toSerialStatus(license),
      });
      const relayHere = this.relay.isRunning;
      const [counted] = await this.incrementStatement([
        id,
        orgId,
        increment,
        license.updatedAt,
        now,
        event.id,
        event.subject,
        event.payload,
        outboxTraceContext(),
        this.outboxChannel,
        !relayHere,
        periodStart,
        license.policy?.updatedAt ?? null,
      ]);
      if (!counted) continue;
      if (relayHere) this.relay.signal();
      return {
        uses: Number(counted.uses),
        max_uses: counted.max_uses === null ? null : Number(counted.max_uses),
      };
    }
    throw DomainError.conflict(`License ${id} kept changing while its use was counted; retry`);
  }

  /** Back to 0 (admin). A revoked license cannot change. */
  async reset(orgId: string, id: string): Promise<LicenseUsesView> {
    const license = await this.dataSource.transaction(async (manager) => {
      const license = await manager.findOne(LicenseEntity, {
        where: { id, orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!license) throw DomainError.notFound('License', id);
      if (license.status === 'revoked') {
        throw DomainError.conflict(`License ${id} is revoked and cannot change`);
      }
      license.product = await manager.findOneByOrFail(CatalogProductEntity, { id: license.productId });
      await this.resetUses(manager, license, new Date());
      return license;
    });
    return { uses: license.uses, max_uses: license.maxUses };
  }

  /**
   * Sets a locked license's uses to 0, counting from `now`, and records `license.usage_reset` with
   * its audit entry.
   */
  async resetUses(manager: EntityManager, license: LicenseEntity, now: Date): Promise<void> {
    await loadEntitlements(manager, [license]);
    const before = toLicenseView(license, license.product!, { withBlob: false });
    await manager.update(LicenseEntity, { id: license.id }, { uses: 0, usesPeriodStart: now });
    license.uses = 0;
    license.usesPeriodStart = now;
    const data = toLicenseView(license, license.product!, { withBlob: false });
    await recordLicenseChange(manager, license, {
      type: 'license.usage_reset',
      action: 'updated',
      before,
      data,
      now,
    });
  }
}
