import { Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';

/**
 * An event or audit entry waiting to be published, written in the same transaction as the change
 * it describes: a change that rolls back leaves none, and a committed one is published even if the
 * process dies right after. Each service has this table in its own schema.
 */
@Entity({ name: 'outbox_events' })
@Unique('uq_outbox_events_id', ['id'])
export class OutboxEventEntity {
  /** Publication order. A bigint, which pg returns as a string. */
  @PrimaryGeneratedColumn({ type: 'bigint' })
  seq!: string;

  @Column('uuid')
  id!: string;

  @Column('varchar', { length: 255 })
  subject!: string;

  /** The event exactly as it is published, serialized once. */
  @Column('text')
  payload!: string;

  /**
   * The trace of the request that wrote the event (`{"traceparent": …}`), when tracing is on: the
   * relay publishes the event in that trace, however much later.
   */
  @Column('text', { name: 'trace_context', nullable: true })
  traceContext!: string | null;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;
}
