import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { DELIVERY_STATUSES, DeliveryStatus } from '@licensing/contracts';
import { TIMESTAMP, oneOf } from '@licensing/shared/database';
import { EndpointEntity } from '../endpoints/endpoint.entity';
import { WebhookEventEntity } from './webhook-event.entity';

/**
 * One event for one endpoint, and its schedule: the row is the queue. `next_attempt_at` is when a
 * pending delivery is due; a worker claims due rows with FOR UPDATE SKIP LOCKED and moves
 * `next_attempt_at` past the attempt's deadline (its lease) in the same statement, so a second
 * replica never takes it, and a worker that dies mid-attempt leaves it due again once the lease
 * ends. The unique (endpoint_id, event_id) makes a redelivered stream message a no-op.
 */
@Entity({ name: 'deliveries' })
@Unique('uq_deliveries_endpoint_event', ['endpointId', 'eventId'])
@Index('ix_deliveries_endpoint_created', ['endpointId', 'createdAt', 'id'])
@Index('ix_deliveries_due', ['nextAttemptAt'], { where: `status = 'pending'` })
@Index('ix_deliveries_endpoint_due', ['endpointId', 'nextAttemptAt'], { where: `status = 'pending'` })
@Index('ix_deliveries_event', ['eventId'])
@Check('ck_deliveries_status', oneOf('status', DELIVERY_STATUSES))
export class DeliveryEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'endpoint_id' })
  endpointId!: string;

  @ManyToOne(() => EndpointEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'endpoint_id', foreignKeyConstraintName: 'fk_deliveries_endpoint' })
  endpoint?: EndpointEntity;

  @Column('uuid', { name: 'event_id' })
  eventId!: string;

  @ManyToOne(() => WebhookEventEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'event_id', foreignKeyConstraintName: 'fk_deliveries_event' })
  event?: WebhookEventEntity;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('varchar', { name: 'event_type', length: 64 })
  eventType!: string;

  @Column('varchar', { length: 20 })
  status!: DeliveryStatus;

  /** Every attempt ever made. */
  @Column('integer', { default: 0 })
  attempts!: number;

  /** Attempts since the delivery was created or last redelivered: what the backoff and the limit count. */
  @Column('integer', { name: 'round_attempts', default: 0 })
  roundAttempts!: number;

  @Column({ ...TIMESTAMP, name: 'next_attempt_at', nullable: true })
  nextAttemptAt!: Date | null;

  @Column('integer', { name: 'last_status_code', nullable: true })
  lastStatusCode!: number | null;

  @Column('varchar', { name: 'last_error', length: 500, nullable: true })
  lastError!: string | null;

  @Column({ ...TIMESTAMP, name: 'last_attempt_at', nullable: true })
  lastAttemptAt!: Date | null;

  @Column('integer', { name: 'last_duration_ms', nullable: true })
  lastDurationMs!: number | null;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  @Column({ ...TIMESTAMP, name: 'delivered_at', nullable: true })
  deliveredAt!: Date | null;
}
