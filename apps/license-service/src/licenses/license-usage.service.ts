import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { LicenseUsesView, effectiveStatus } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { preparedStatement } from '@licensing/shared/database';
import {
  OutboxEventEntity,
  OutboxRelay,
  auditChanges,
  eventRow,
  outboxChannel,
  outboxTraceContext,
  recordAudit,
  recordEvent,
} from '@licensing/shared/events';
import { CredentialReach } from '@licensing/shared/logging';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { loadEntitlements } from '../entitlements/license-entitlements';
import { LicenseEntity } from './license.entity';
import { toLicenseView } from './license.mapper';
import { toSerialStatus } from './serial-statuses.service';

/** An increment is tried again when the license changed (PATCH, attach) between its read and its write. */
const INCREMENT_ATTEMPTS = 5;

/**
 * Metered usage: a license's `uses` against its `max_uses`. An increment is one conditional UPDATE
 * that adds only while the sum stays within the limit and the license is active, so concurrent
 * increments never pass the limit and a refused one changes nothing. Each accepted increment is
 * published (`license.usage_incremented`) by the same statement, and the analytics service counts it.
 *
 * Periodic resets (a policy's `uses_reset`: day, week or month) are not built yet. A sweeper at the
 * UTC boundary will call `resetUses` for each license whose policy asks for it.
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
    // The license as it was read ($4: its updated_at), still active at $5 and within max_uses after
    // the increment ($3); then its event, whose data.uses is the total the UPDATE returned, and the
    // outbox's notification ($10, unless this process's relay is told directly). Nothing is written
    // unless the license row matched. The row is locked only for this one statement.
    this.incrementStatement = preparedStatement(
      dataSource,
      'license-usage-increment',
      `WITH license AS (
         UPDATE ${table(LicenseEntity)} SET uses = uses + $3::bigint
          WHERE id = $1::uuid AND org_id = $2::uuid AND updated_at = $4::timestamptz
            AND status = 'active' AND (valid_until IS NULL OR valid_until > $5::timestamptz)
            AND (max_uses IS NULL OR uses + $3::bigint <= max_uses)
         RETURNING uses, max_uses
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
   * Reads the license, refuses at once what it cannot count (not active, or past max_uses as read:
   * uses only grow until a reset), then counts in one statement guarded by the read's updated_at.
   * A statement that matched nothing means the license changed since the read: read it again.
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
        relations: { product: true },
      });
      if (!license) throw DomainError.notFound('License', id);
      const status = effectiveStatus(license, now);
      if (status !== 'active') {
        throw new DomainError('license_not_active', `License ${id} is ${status}: it cannot count uses`);
      }
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

  /** Sets a locked license's uses to 0 and records `license.usage_reset` with its audit entry. */
  async resetUses(manager: EntityManager, license: LicenseEntity, now: Date): Promise<void> {
    await loadEntitlements(manager, [license]);
    const before = toLicenseView(license, license.product!, { withBlob: false });
    await manager.update(LicenseEntity, { id: license.id }, { uses: 0 });
    license.uses = 0;
    const data = toLicenseView(license, license.product!, { withBlob: false });
    await recordEvent(manager, {
      type: 'license.usage_reset',
      orgId: license.orgId,
      data,
      occurredAt: now,
      serialStatus: toSerialStatus(license),
    });
    await recordAudit(manager, {
      orgId: license.orgId,
      action: 'updated',
      resourceType: 'license',
      resourceId: license.id,
      changes: auditChanges(before, data),
      occurredAt: now,
    });
  }
}
