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
import { PolicyEntity } from './policy.entity';
import { toPolicyView } from './policy.mapper';
import { policyErrors } from './policy-rules';

/**
 * Policies: a product's licensing model. A PATCH of `max_machines` moves the `max_seats` of every
 * license that inherits it, in the same transaction, with a `license.updated` event each; the other
 * limits are read from the policy row by the online paths, so they apply at once without copying.
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
    return { policies: policies.map(toPolicyView), total };
  }

  async get(orgId: string, id: string): Promise<PolicyView> {
    const policy = await this.dataSource.getRepository(PolicyEntity).findOneBy({ id, orgId });
    if (!policy) throw DomainError.notFound('Policy', id);
    return toPolicyView(policy);
  }

  async update(orgId: string, id: string, changes: UpdatePolicyDto): Promise<PolicyView> {
    return this.dataSource.transaction(async (manager) => {
      const policy = await lockPolicy(manager, orgId, id);
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
      if (policy.maxMachines !== before.max_machines) await this.moveInheritedSeats(manager, policy, now);
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
   * The licenses that inherit `max_seats` take the policy's new `max_machines`. Their files keep
   * the claims they were signed with; every online path reads the column. Their updated_at moves,
   * so that the serial status of their events is newer than any before (the revocation cache
   * keeps the newest). Revoked licenses and node-locked ones (one seat, always) are left alone.
   */
  private async moveInheritedSeats(manager: EntityManager, policy: PolicyEntity, now: Date): Promise<void> {
    const table = manager.getRepository(LicenseEntity).metadata.tablePath;
    const [rows] = (await manager.query(
      `UPDATE ${table} SET max_seats = $2, updated_at = $3
        WHERE policy_id = $1 AND NOT ('max_seats' = ANY (overridden))
          AND status <> 'revoked' AND license_type <> 'node_locked' AND max_seats <> $2
        RETURNING id`,
      [policy.id, policy.maxMachines, now],
    )) as [{ id: string }[], number];
    if (rows.length === 0) return;
    const licenses = await manager.find(LicenseEntity, {
      where: { id: In(rows.map((row) => row.id)) },
      relations: { product: true },
    });
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
