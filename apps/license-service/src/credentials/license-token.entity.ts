import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { LicenseEntity } from '../licenses/license.entity';

/**
 * A credential that acts on one license only: what a shipped application holds instead of an
 * organization key. Only the SHA-256 of the token is stored; the token is shown once.
 */
@Entity({ name: 'license_tokens' })
@Unique('uq_license_tokens_hash', ['tokenHash'])
@Index('ix_license_tokens_license_created', ['licenseId', 'createdAt', 'id'])
export class LicenseTokenEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('uuid', { name: 'license_id' })
  licenseId!: string;

  @ManyToOne(() => LicenseEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'license_id', foreignKeyConstraintName: 'fk_license_tokens_license' })
  license?: LicenseEntity;

  @Column('varchar', { length: 255, nullable: true })
  name!: string | null;

  @Column('char', { name: 'token_hash', length: 64 })
  tokenHash!: string;

  @Column('varchar', { length: 10 })
  prefix!: string;

  @Column({ ...TIMESTAMP, name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  @Column({ ...TIMESTAMP, name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;
}
