import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { LicenseEntity } from '../licenses/license.entity';

/**
 * A relay file issued to one relay: the license it leases, the relay's site and public key (which
 * verifies the relay's usage reports), and the signed file's lifetime. The file itself is not
 * kept: it is handed out once, and a new one is issued in its place.
 */
@Entity({ name: 'relay_files' })
@Index('ix_relay_files_org_created', ['orgId', 'createdAt', 'id'])
@Index('ix_relay_files_license_created', ['licenseId', 'createdAt', 'id'])
export class RelayFileEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'pk_relay_files' })
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('uuid', { name: 'license_id' })
  licenseId!: string;

  @ManyToOne(() => LicenseEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'license_id', foreignKeyConstraintName: 'fk_relay_files_license' })
  license?: LicenseEntity;

  @Column('uuid', { name: 'product_id' })
  productId!: string;

  @Column('varchar', { length: 200 })
  site!: string;

  @Column('text', { name: 'public_key' })
  publicKey!: string;

  @Column({ ...TIMESTAMP, name: 'issued_at' })
  issuedAt!: Date;

  @Column({ ...TIMESTAMP, name: 'expires_at' })
  expiresAt!: Date;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;
}
