import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
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
  private readonly insert: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.insert = `INSERT INTO ${dataSource.getMetadata(AuditEventEntity).tablePath}
                          (id, org_id, occurred_at, action, resource_type, resource_id, actor_api_key_id,
                           actor_prefix, actor_name, request_id, ip, changes)
                   SELECT e.id, e.org_id, e.occurred_at, e.action, e.resource_type, e.resource_id,
                          (e.actor->>'api_key_id')::uuid, e.actor->>'prefix', e.actor->>'name',
                          e.request_id, e.ip, e.changes
                     FROM jsonb_to_recordset($1::jsonb) AS e(
                            id uuid, org_id uuid, occurred_at timestamptz, action text, resource_type text,
                            resource_id uuid, actor jsonb, request_id text, ip text, changes jsonb)
                   ON CONFLICT DO NOTHING`;
  }

  /** A change the gateway makes itself (API keys): its entry, in the change's own transaction. */
  async record(manager: EntityManager, input: AuditInput): Promise<void> {
    const entry = auditEntry(input);
    if (entry) await this.store(manager, [entry]);
  }

  /**
   * Idempotent on the entry id: an entry delivered twice is stored once. One statement per batch,
   * the entries passed as one JSON array (TypeORM's insert builder cost more CPU than the insert).
   */
  async store(manager: EntityManager, entries: AuditEntryRecord[]): Promise<void> {
    await manager.query(this.insert, [JSON.stringify(entries)]);
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
