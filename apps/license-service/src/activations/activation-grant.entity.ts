import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { LicenseEntity } from '../licenses/license.entity';

/**
 * One row per seat ever granted (online or air-gapped), kept for a day after the activation itself
 * is gone: the per-license cap on activations created in 24 h counts these, so releasing and
 * activating again cannot farm seats or activation files.
 */
@Entity({ name: 'activation_grants' })
@Index('ix_activation_grants_license_created', ['licenseId', 'createdAt'])
@Index('ix_activation_grants_created', ['createdAt'])
export class ActivationGrantEntity {
  /** The activation's id. */
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'license_id' })
  licenseId!: string;

  @ManyToOne(() => LicenseEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'license_id', foreignKeyConstraintName: 'fk_activation_grants_license' })
  license?: LicenseEntity;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;
}
