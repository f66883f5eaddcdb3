import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  CreateEntitlementDto,
  EntitlementListView,
  EntitlementView,
  MessageView,
  PageQueryDto,
  UpdateEntitlementDto,
  pageOf,
} from '@licensing/contracts';
import { isForeignKeyViolation, isUniqueViolation, pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { auditChanges, recordAudit, recordEvent } from '@licensing/shared/events';
import { EntitlementEntity } from './entitlement.entity';
import { PolicyEntitlementEntity } from '../policies/policy-entitlement.entity';
import { LicenseEntitlementEntity } from './license-entitlement.entity';

function toEntitlementView(entitlement: EntitlementEntity): EntitlementView {
  return {
    id: entitlement.id,
    code: entitlement.code,
    name: entitlement.name,
    created_at: entitlement.createdAt.toISOString(),
  };
}

/** The organization's entitlement catalog: codes that licenses and policies grant. */
@Injectable()
export class EntitlementsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async create(orgId: string, dto: CreateEntitlementDto): Promise<EntitlementView> {
    const now = new Date();
    const entitlement = Object.assign(new EntitlementEntity(), {
      id: randomUUID(),
      orgId,
      code: dto.code,
      name: dto.name,
      createdAt: now,
      updatedAt: now,
    });
    const view = toEntitlementView(entitlement);
    try {
      await this.dataSource.transaction(async (manager) => {
        await manager.insert(EntitlementEntity, entitlement);
        await recordEvent(manager, { type: 'entitlement.created', orgId, data: view, occurredAt: now });
        await recordAudit(manager, {
          orgId,
          action: 'created',
          resourceType: 'entitlement',
          resourceId: entitlement.id,
          changes: auditChanges(null, view),
          occurredAt: now,
        });
      });
    } catch (error) {
      if (isUniqueViolation(error, 'uq_entitlements_org_code')) {
        throw DomainError.conflict(`An entitlement with code "${dto.code}" already exists`);
      }
      throw error;
    }
    return view;
  }

  async list(orgId: string, query: PageQueryDto): Promise<EntitlementListView> {
    const [entitlements, total] = await this.dataSource.getRepository(EntitlementEntity).findAndCount({
      where: { orgId },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...pageWindow(pageOf(query)),
    });
    return { entitlements: entitlements.map(toEntitlementView), total };
  }

  async get(orgId: string, id: string): Promise<EntitlementView> {
    const entitlement = await this.dataSource.getRepository(EntitlementEntity).findOneBy({ id, orgId });
    if (!entitlement) throw DomainError.notFound('Entitlement', id);
    return toEntitlementView(entitlement);
  }

  /** Only the name changes: the code is immutable, since license files carry it. */
  update(orgId: string, id: string, changes: UpdateEntitlementDto): Promise<EntitlementView> {
    return this.dataSource.transaction(async (manager) => {
      const entitlement = await manager.findOne(EntitlementEntity, {
        where: { id, orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!entitlement) throw DomainError.notFound('Entitlement', id);
      const before = toEntitlementView(entitlement);
      const now = new Date();
      if (changes.name !== undefined) entitlement.name = changes.name;
      entitlement.updatedAt = now;
      await manager.save(entitlement);
      const view = toEntitlementView(entitlement);
      await recordEvent(manager, { type: 'entitlement.updated', orgId, data: view, occurredAt: now });
      await recordAudit(manager, {
        orgId,
        action: 'updated',
        resourceType: 'entitlement',
        resourceId: id,
        changes: auditChanges(before, view),
        occurredAt: now,
      });
      return view;
    });
  }

  /**
   * Refused while a license holds it of its own or a policy grants it. The foreign keys decide when
   * a concurrent attach or policy change races the check; either way the answer is a 409.
   */
  async delete(orgId: string, id: string): Promise<MessageView> {
    const inUse = () =>
      DomainError.conflict(`Entitlement ${id} is attached to licenses or granted by policies`);
    try {
      await this.dataSource.transaction(async (manager) => {
        const entitlement = await manager.findOne(EntitlementEntity, {
          where: { id, orgId },
          lock: { mode: 'pessimistic_write' },
        });
        if (!entitlement) throw DomainError.notFound('Entitlement', id);
        if (await manager.existsBy(LicenseEntitlementEntity, { entitlementId: id })) throw inUse();
        if (await manager.existsBy(PolicyEntitlementEntity, { entitlementId: id })) throw inUse();
        await manager.delete(EntitlementEntity, { id });
        const view = toEntitlementView(entitlement);
        await recordEvent(manager, { type: 'entitlement.deleted', orgId, data: view });
        await recordAudit(manager, {
          orgId,
          action: 'deleted',
          resourceType: 'entitlement',
          resourceId: id,
          changes: auditChanges(view, null),
        });
      });
    } catch (error) {
      if (
        isForeignKeyViolation(error, 'fk_license_entitlements_entitlement') ||
        isForeignKeyViolation(error, 'fk_policy_entitlements_entitlement')
      ) {
        throw inUse();
      }
      throw error;
    }
    return { message: `Entitlement ${id} deleted` };
  }
}
