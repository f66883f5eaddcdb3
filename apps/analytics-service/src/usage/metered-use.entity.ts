import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';

/**
 * One accepted usage increment of a license, from its `license.usage_incremented` event. The
 * event id is the key: a redelivered or re-published event is stored once, so counted once.
 */
@Entity({ name: 'metered_uses' })
@Index('ix_metered_uses_license_occurred', ['orgId', 'licenseId', 'occurredAt'])
export class MeteredUseEntity {
  @PrimaryColumn('uuid', { name: 'event_id', primaryKeyConstraintName: 'pk_metered_uses' })
  eventId!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('uuid', { name: 'license_id' })
  licenseId!: string;

  @Column('uuid', { name: 'product_id' })
  productId!: string;

  @Column('integer')
  increment!: number;

  /** The license's total after this increment. */
  @Column('bigint')
  uses!: string;

  @Column({ ...TIMESTAMP, name: 'occurred_at' })
  occurredAt!: Date;
}
