import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { OrganizationEntity } from '../identity/organization.entity';

/**
 * An organization's response key: the Ed25519 key pair that signs its online answers. One per
 * organization (the unique constraint settles two gateways creating it at once), created on first
 * use; the private half sealed with RESPONSE_MASTER_KEYS, the key's id as associated data.
 */
@Entity({ name: 'response_keys' })
@Unique('uq_response_keys_org', ['orgId'])
export class ResponseKeyEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'pk_response_keys' })
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'org_id', foreignKeyConstraintName: 'fk_response_keys_org' })
  organization?: OrganizationEntity;

  /** The public key as a PEM (SPKI). */
  @Column('text', { name: 'public_key' })
  publicKey!: string;

  /** AES-256-GCM: 12-byte IV, 16-byte tag, then the PKCS#8 PEM. */
  @Column('bytea', { name: 'private_key_ciphertext', select: false })
  privateKeyCiphertext!: Buffer;

  @Column('varchar', { name: 'master_key_version', length: 64, select: false })
  masterKeyVersion!: string;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;
}
