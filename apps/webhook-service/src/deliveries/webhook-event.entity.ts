import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';

/**
 * An event as it is delivered, stored once however many endpoints receive it: `payload` is the
 * exact body every attempt sends (`{id, type, org_id, occurred_at, data}`), so a retry days later
 * sends the same bytes. Only events that at least one endpoint receives are kept.
 */
@Entity({ name: 'events' })
export class WebhookEventEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('varchar', { length: 64 })
  type!: string;

  @Column('text')
  payload!: string;

  @Column({ ...TIMESTAMP, name: 'occurred_at' })
  occurredAt!: Date;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;
}
