import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, IsNull } from 'typeorm';
import {
  CreatePolicyDto,
  ListPoliciesQueryDto,
  MessageView,
  PolicyListView,
  PolicyView,
  UpdatePolicyDto,
  pageOf,
} from '@licensing/contracts';
import { isForeignKeyViolation, pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { auditChanges, recordAudit, recordEvent } from '@licensing/shared/events';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { LicenseEntity } from '../licenses/license.entity';
import { toLicenseView } from '../licenses/license.mapper';
import { toSerialStatus } from '../licenses/serial-statuses.service';
import { loadEntitlements } from '../entitlements/license-entitlements';
import { loadPolicyEntitlements, replacePolicyEntitlements } from './policy-entitlements';
import { PolicyEntity } from './policy.entity';
import { toPolicyView } from './policy.mapper';
import { policyErrors } from './policy-rules';

/**
 * Policies: a product's licensing model. A PATCH of `max_machines` or `max_uses` moves the
 * `max_seats` or `max_uses` of every license that inherits it, and a PATCH of `entitlements` changes
 * the entitlements of every license of the policy, in the same transaction, with a
 * `license.updated` event each. The other limits are read from the policy row by the online paths,
 * so they apply at once without copying.
 */
@Injectable()
export class PoliciesService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async create(orgId: string, dto: CreatePolicyDto): Promise<PolicyView> {
    return this.dataSource.transaction(async (manager) => {
      const product = await manager.findOne(CatalogProductEntity, {
        where: { id: dto.product_id, orgId, retiredAt: IsNull() },
        lock: { mode: 'pessimistic_read' },
      });
      if (!product) throw DomainError.notFound('Product', dto.product_id);
      const now = new Date();
      const licenseType = dto.license_type ?? 'subscription';
      const productDuration = product.defaultValidDays === 0 ? null : product.defaultValidDays;
      const policy = Object.assign(new PolicyEntity(), {
        id: randomUUID(),
        orgId,
        productId: product.id,
        name: dto.name,
        licenseType,
        // A perpetual policy has no end, whatever the product's default validity.
        durationDays:
          dto.duration_days !== undefined
            ? dto.duration_days
            : licenseType === 'perpetual'
              ? null
              : productDuration,
        maxMachines: dto.max_machines ?? 1,
        maxProcesses: dto.max_processes ?? null,
        maxUses: dto.max_uses ?? null,
        usesReset: dto.uses_reset ?? null,
        heartbeatIntervalSeconds: dto.heartbeat_interval_seconds ?? null,
        heartbeatGraceSeconds: dto.heartbeat_grace_seconds ?? 0,
        checkInIntervalDays: dto.check_in_interval_days ?? null,
        overage: dto.overage ?? 'none',
        machineMatching: dto.machine_matching ?? 'all',
        createdAt: now,
        updatedAt: now,
      });
      const errors = policyErrors(policy);
      if (errors.length > 0) throw DomainError.validation(errors);
      await manager.insert(PolicyEntity, policy);
      await replacePolicyEntitlements(manager, policy, dto.entitlements ?? [], now);
      const view = toPolicyView(policy);
      await recordEvent(manager, { type: 'policy.created', orgId, data: view, occurredAt: now });
      await recordAudit(manager, {
        orgId,
        action: 'created',
        resourceType: 'policy',
        resourceId: policy.id,
        changes: auditChanges(null, view),
        occurredAt: now,
      });
      return view;
    });
  }

  async list(orgId: string, query: ListPoliciesQueryDto): Promise<PolicyListView> {
    const [policies, total] = await this.dataSource.getRepository(PolicyEntity).findAndCount({
      where: { orgId, ...(query.product_id ? { productId: query.product_id } : {}) },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...pageWindow(pageOf(query)),
    });
    await loadPolicyEntitlements(this.dataSource.manager, policies);
    return { policies: policies.map(toPolicyView), total };
  }

  async get(orgId: string, id: string): Promise<PolicyView> {
    const policy = await this.dataSource.getRepository(PolicyEntity).findOneBy({ id, orgId });
    if (!policy) throw DomainError.notFound('Policy', id);
    await loadPolicyEntitlements(this.dataSource.manager, [policy]);
    return toPolicyView(policy);
  }

  async update(orgId: string, id: string, changes: UpdatePolicyDto): Promise<PolicyView> {
    return this.dataSource.transaction(async (manager) => {
      const policy = await lockPolicy(manager, orgId, id);
      await loadPolicyEntitlements(manager, [policy]);
      const before = toPolicyView(policy);
      const now = new Date();
      const assign = <K extends keyof PolicyEntity>(key: K, value: PolicyEntity[K] | undefined) => {
        if (value !== undefined) policy[key] = value;
      };
      assign('name', changes.name);
      assign('licenseType', changes.license_type);
      assign('durationDays', changes.duration_days);
      assign('maxMachines', changes.max_machines);
      assign('maxProcesses', changes.max_processes);
      assign('maxUses', changes.max_uses);
      assign('usesReset', changes.uses_reset);
      assign('heartbeatIntervalSeconds', changes.heartbeat_interval_seconds);
      assign('heartbeatGraceSeconds', changes.heartbeat_grace_seconds);
      assign('checkInIntervalDays', changes.check_in_interval_days);
      assign('overage', changes.overage);
      assign('machineMatching', changes.machine_matching);
      // Switching to perpetual without a word on the duration drops the duration.
      if (changes.license_type === 'perpetual' && changes.duration_days === undefined)
        policy.durationDays = null;
      const errors = policyErrors(policy);
      if (errors.length > 0) throw DomainError.validation(errors);
      policy.updatedAt = now;
      await manager.save(policy);
      if (changes.entitlements !== undefined) {
        await replacePolicyEntitlements(manager, policy, changes.entitlements, now);
      }
      await this.moveLicenses(manager, policy, before, now);
      const view = toPolicyView(policy);
      await recordEvent(manager, { type: 'policy.updated', orgId, data: view, occurredAt: now });
      await recordAudit(manager, {
        orgId,
        action: 'updated',
        resourceType: 'policy',
        resourceId: id,
        changes: auditChanges(before, view),
        occurredAt: now,
      });
      return view;
    });
  }

  /** Refused while any license, revoked ones included, follows the policy. */
  async delete(orgId: string, id: string): Promise<MessageView> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const policy = await lockPolicy(manager, orgId, id);
        await loadPolicyEntitlements(manager, [policy]);
        const used = await manager.exists(LicenseEntity, { where: { policyId: id } });
        if (used) throw DomainError.conflict(`Policy ${id} has licenses; it cannot be deleted`);
        await manager.delete(PolicyEntity, { id });
        const view = toPolicyView(policy);
        await recordEvent(manager, { type: 'policy.deleted', orgId, data: view });
        await recordAudit(manager, {
          orgId,
          action: 'deleted',
          resourceType: 'policy',
          resourceId: id,
          changes: auditChanges(view, null),
        });
        return { message: `Policy ${id} deleted` };
      });
    } catch (error) {
      // A license created meanwhile: the foreign key decides.
      if (isForeignKeyViolation(error, 'fk_licenses_policy')) {
        throw DomainError.conflict(`Policy ${id} has licenses; it cannot be deleted`);
      }
      throw error;
    }
  }

  /**
   * Carries a PATCH to the policy's licenses. Those that inherit `max_seats` take the new
   * `max_machines` (node-locked ones keep their one seat), those that inherit `max_uses` take the
   * new `max_uses`, and when `entitlements` changed, every license of the policy holds the new
   * union. Their files keep the claims they were signed with; every online path reads the columns
   * and the policy's entitlements. Their updated_at moves, so that the serial status of their events
   * is newer than any before (the revocation cache keeps the newest), and so that an increment read
   * before this change is read again. Revoked licenses are left alone.
   */
  private async moveLicenses(
    manager: EntityManager,
    policy: PolicyEntity,
    before: PolicyView,
    now: Date,
  ): Promise<void> {
    const seats = policy.maxMachines !== before.max_machines;
    const uses = policy.maxUses !== before.max_uses;
    const entitlements = policy.entitlements!.join(' ') !== before.entitlements.join(' ');
    if (!seats && !uses && !entitlements) return;
    const table = manager.getRepository(LicenseEntity).metadata.tablePath;
    const movesSeats = `$2::boolean AND NOT ('max_seats' = ANY (overridden))
                        AND license_type <> 'node_locked' AND max_seats <> $3::integer`;
    const movesUses = `$4::boolean AND NOT ('max_uses' = ANY (overridden))
                       AND max_uses IS DISTINCT FROM $5::bigint`;
    const [rows] = (await manager.query(
      `UPDATE ${table}
          SET max_seats = CASE WHEN ${movesSeats} THEN $3::integer ELSE max_seats END,
              max_uses = CASE WHEN ${movesUses} THEN $5::bigint ELSE max_uses END,
              updated_at = $6
        WHERE policy_id = $1 AND status <> 'revoked'
          AND ((${movesSeats}) OR (${movesUses}) OR $7::boolean)
        RETURNING id`,
      [policy.id, seats, policy.maxMachines, uses, policy.maxUses, now, entitlements],
    )) as [{ id: string }[], number];
    if (rows.length === 0) return;
    const licenses = await manager.find(LicenseEntity, {
      where: { id: In(rows.map((row) => row.id)) },
      relations: { product: true },
    });
    await loadEntitlements(manager, licenses);
    for (const license of licenses) {
      await recordEvent(manager, {
        type: 'license.updated',
        orgId: license.orgId,
        data: toLicenseView(license, license.product!, { withBlob: false }),
        occurredAt: now,
        serialStatus: toSerialStatus(license),
      });
    }
  }
}

async function lockPolicy(manager: EntityManager, orgId: string, id: string): Promise<PolicyEntity> {
  const policy = await manager.findOne(PolicyEntity, {
    where: { id, orgId },
    lock: { mode: 'pessimistic_write' },
  });
  if (!policy) throw DomainError.notFound('Policy', id);
  return policy;
}
