import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { OrganizationEntity } from '../identity/organization.entity';

const RESPONSE_KEY_STATUSES = ['next', 'active', 'retired'] as const;
export type ResponseKeyStatus = (typeof RESPONSE_KEY_STATUSES)[number];

/**
 * An Ed25519 key pair that signs an organization's online answers. The organization has one
 * `active` key (the one that signs; created on first use), at most one `next` key (published, not
 * signing yet: applications learn it before a rotation makes it active) and any number of
 * `retired` keys (published until deleted, so answers signed before a rotation still verify). The
 * partial unique indexes settle two gateways creating the first key at once. The private half is
 * sealed with RESPONSE_MASTER_KEYS, the key's id as associated data.
 */
@Entity({ name: 'response_keys' })
@Index('uq_response_keys_org_active', ['orgId'], { unique: true, where: `status = 'active'` })
@Index('uq_response_keys_org_next', ['orgId'], { unique: true, where: `status = 'next'` })
@Check('ck_response_keys_status', `status IN ('next', 'active', 'retired')`)
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

  @Column('varchar', { length: 10, default: 'active' })
  status!: ResponseKeyStatus;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;
}
