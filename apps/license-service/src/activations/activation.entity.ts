import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { LicenseEntity } from '../licenses/license.entity';

/**
 * A machine holding a seat of a license. One row per (license, fingerprint); a row past
 * `expires_at` holds no seat and is removed by the activation sweeper.
 */
@Entity({ name: 'activations' })
@Unique('uq_activations_license_fingerprint', ['licenseId', 'fingerprint'])
@Unique('uq_activations_token_hash', ['tokenHash'])
@Index('ix_activations_org_created', ['orgId', 'createdAt', 'id'])
@Index('ix_activations_expires', ['expiresAt'])
export class ActivationEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('uuid', { name: 'license_id' })
  licenseId!: string;

  @ManyToOne(() => LicenseEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'license_id', foreignKeyConstraintName: 'fk_activations_license' })
  license?: LicenseEntity;

  @Column('varchar', { length: 512 })
  fingerprint!: string;

  @Column('varchar', { length: 255, nullable: true })
  hostname!: string | null;

  @Column('varchar', { length: 100, nullable: true })
  platform!: string | null;

  @Column('jsonb', { default: () => "'{}'" })
  components!: Record<string, string>;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  @Column({ ...TIMESTAMP, name: 'last_heartbeat_at' })
  lastHeartbeatAt!: Date;

  @Column({ ...TIMESTAMP, name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  /**
   * An offline activation's machine key (the `x` of its Ed25519 JWK, from the activation request):
   * the key its release must be signed with. Null for an online activation.
   */
  @Column('varchar', { name: 'machine_key', length: 64, nullable: true })
  machineKey!: string | null;

  /**
   * The SHA-256 of the activation's machine token (`mt_…`), issued when a license token took the
   * seat: the token acts on this activation only, and dies with the row. Null: no machine token.
   */
  @Column('char', { name: 'token_hash', length: 64, nullable: true })
  tokenHash!: string | null;
}
