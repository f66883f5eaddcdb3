import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { KeyPairEntity } from '../key-pairs/key-pair.entity';

/**
 * The license service's copy of a product, written by the product service. It is never deleted,
 * only retired, so that licenses keep their product reference; the foreign key on key_pair_id is
 * what makes "a key pair in use cannot be deleted" a database rule.
 */
@Entity({ name: 'catalog_products' })
@Index('ix_catalog_products_key_pair', ['keyPairId'])
export class CatalogProductEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('varchar', { length: 100 })
  code!: string;

  @Column('varchar', { length: 255 })
  name!: string;

  @Column('uuid', { name: 'key_pair_id', nullable: true })
  keyPairId!: string | null;

  @ManyToOne(() => KeyPairEntity, { onDelete: 'RESTRICT', nullable: true })
  @JoinColumn({ name: 'key_pair_id', foreignKeyConstraintName: 'fk_catalog_products_key_pair' })
  keyPair?: KeyPairEntity;

  @Column('text', { name: 'default_features', array: true })
  defaultFeatures!: string[];

  @Column('integer', { name: 'default_valid_days' })
  defaultValidDays!: number;

  @Column('integer', { name: 'max_concurrent_activations', nullable: true })
  maxConcurrentActivations!: number | null;

  @Column('integer', { name: 'activation_heartbeat_interval', nullable: true })
  activationHeartbeatInterval!: number | null;

  @Column({ ...TIMESTAMP, name: 'retired_at', nullable: true })
  retiredAt!: Date | null;

  @Column({ ...TIMESTAMP, name: 'updated_at' })
  updatedAt!: Date;
}
