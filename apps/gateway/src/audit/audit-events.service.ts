import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import {
  AuditEntryRecord,
  AuditEventListView,
  AuditEventView,
  AuditResourceType,
  ListAuditEventsQueryDto,
  pageOf,
} from '@licensing/contracts';
import { pageWindow } from '@licensing/shared/database';
import { AuditInput, auditEntry } from '@licensing/shared/events';
import { AuditEventEntity } from './audit-event.entity';

function toEntity(entry: AuditEntryRecord): AuditEventEntity {
  return Object.assign(new AuditEventEntity(), {
    id: entry.id,
    orgId: entry.org_id,
    occurredAt: new Date(entry.occurred_at),
    action: entry.action,
    resourceType: entry.resource_type,
    resourceId: entry.resource_id,
    actorApiKeyId: entry.actor.api_key_id,
    actorPrefix: entry.actor.prefix,
    actorName: entry.actor.name,
    requestId: entry.request_id,
    ip: entry.ip ?? null,
    changes: entry.changes,
  });
}

function toView(event: AuditEventEntity): AuditEventView {
  return {
    id: event.id,
    occurred_at: event.occurredAt.toISOString(),
    action: event.action,
    resource_type: event.resourceType as AuditResourceType,
    resource_id: event.resourceId,
    actor: { api_key_id: event.actorApiKeyId, prefix: event.actorPrefix, name: event.actorName },
    request_id: event.requestId,
    ip: event.ip,
    changes: event.changes,
  };
}

/** The audit log: stored here for every service, listed per organization, newest first. */
@Injectable()
export class AuditEventsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A change the gateway makes itself (API keys): its entry, in the change's own transaction. */
  async record(manager: EntityManager, input: AuditInput): Promise<void> {
    const entry = auditEntry(input);
    if (entry) await this.store(manager, [entry]);
  }

  /** Idempotent on the entry id: an entry delivered twice is stored once. */
  async store(manager: EntityManager, entries: AuditEntryRecord[]): Promise<void> {
    await manager
      .createQueryBuilder()
      .insert()
      .into(AuditEventEntity)
      // `changes` holds arbitrary JSON, which TypeORM's deep-partial type cannot follow.
      .values(entries.map(toEntity) as QueryDeepPartialEntity<AuditEventEntity>[])
      .orIgnore()
      .execute();
  }

  async list(orgId: string, query: ListAuditEventsQueryDto): Promise<AuditEventListView> {
    const { skip, take } = pageWindow(pageOf(query));
    const builder = this.dataSource
      .getRepository(AuditEventEntity)
      .createQueryBuilder('a')
      .where('a.org_id = :orgId', { orgId })
      .orderBy('a.occurred_at', 'DESC')
      .addOrderBy('a.id', 'DESC')
      .offset(skip)
      .limit(take);
    if (query.resource_type) builder.andWhere('a.resource_type = :type', { type: query.resource_type });
    if (query.resource_id) builder.andWhere('a.resource_id = :resource', { resource: query.resource_id });
    if (query.action) builder.andWhere('a.action = :action', { action: query.action });
    if (query.api_key_id) builder.andWhere('a.actor_api_key_id = :key', { key: query.api_key_id });
    if (query.from) builder.andWhere('a.occurred_at >= :from', { from: new Date(query.from) });
    if (query.to) builder.andWhere('a.occurred_at < :to', { to: new Date(query.to) });
    const [events, total] = await builder.getManyAndCount();
    return { audit_events: events.map(toView), total };
  }
}
