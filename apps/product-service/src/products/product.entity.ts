import { Check, Column, Entity, Index, PrimaryColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';

@Entity({ name: 'products' })
@Unique('uq_products_org_code', ['orgId', 'code'])
@Index('ix_products_org_created', ['orgId', 'createdAt', 'id'])
@Check('ck_products_code', `code ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND char_length(code) <= 100`)
@Check('ck_products_valid_days', 'default_valid_days >= 0')
@Check('ck_products_max_concurrent', 'max_concurrent_activations IS NULL OR max_concurrent_activations > 0')
@Check('ck_products_heartbeat', 'activation_heartbeat_interval IS NULL OR activation_heartbeat_interval > 0')
export class ProductEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('varchar', { length: 255 })
  name!: string;

  @Column('varchar', { length: 100 })
  code!: string;

  @Column('text', { default: '' })
  description!: string;

  @Column('text', { name: 'default_features', array: true, default: () => "'{}'" })
  defaultFeatures!: string[];

  @Column('integer', { name: 'default_valid_days', default: 365 })
  defaultValidDays!: number;

  @Column('uuid', { name: 'key_pair_id', nullable: true })
  keyPairId!: string | null;

  @Column('integer', { name: 'max_concurrent_activations', nullable: true })
  maxConcurrentActivations!: number | null;

  @Column('integer', { name: 'activation_heartbeat_interval', nullable: true })
  activationHeartbeatInterval!: number | null;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  @Column({ ...TIMESTAMP, name: 'updated_at' })
  updatedAt!: Date;

  /** Set while a deletion waits for the license service's consent: the product is hidden meanwhile. */
  @Column({ ...TIMESTAMP, name: 'deleting_since', nullable: true })
  deletingSince!: Date | null;
}
