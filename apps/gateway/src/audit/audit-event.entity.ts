import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { AUDIT_ACTIONS, AuditAction, AuditChanges } from '@licensing/contracts';
import { TIMESTAMP } from '@licensing/shared/database';

/**
 * One change made with an API key, in any service: the gateway's own (API keys) written with the
 * change, the services' stored from the AUDIT_EVENTS stream. The id is the entry's own, so storing
 * a redelivered entry again is a no-op. Entries are never updated or deleted.
 */
@Entity({ name: 'audit_events' })
@Index('ix_audit_events_org_occurred', ['orgId', 'occurredAt', 'id'])
@Index('ix_audit_events_org_resource', ['orgId', 'resourceId', 'occurredAt'])
@Check('ck_audit_events_action', `action IN (${AUDIT_ACTIONS.map((a) => `'${a}'`).join(', ')})`)
export class AuditEventEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column({ ...TIMESTAMP, name: 'occurred_at' })
  occurredAt!: Date;

  @Column('varchar', { length: 20 })
  action!: AuditAction;

  @Column('varchar', { name: 'resource_type', length: 40 })
  resourceType!: string;

  @Column('uuid', { name: 'resource_id' })
  resourceId!: string;

  @Column('uuid', { name: 'actor_api_key_id' })
  actorApiKeyId!: string;

  @Column('varchar', { name: 'actor_prefix', length: 10 })
  actorPrefix!: string;

  @Column('varchar', { name: 'actor_name', length: 255 })
  actorName!: string;

  @Column('varchar', { name: 'request_id', length: 128 })
  requestId!: string;

  @Column('varchar', { length: 64, nullable: true })
  ip!: string | null;

  @Column('jsonb')
  changes!: AuditChanges;
}
