import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { KEY_ALGORITHMS, KeyAlgorithm } from '@licensing/license-format';
import { TIMESTAMP, oneOf } from '@licensing/shared/database';

@Entity({ name: 'key_pairs' })
@Index('ix_key_pairs_org_created', ['orgId', 'createdAt', 'id'])
@Check('ck_key_pairs_algorithm', oneOf('algorithm', KEY_ALGORITHMS))
export class KeyPairEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('varchar', { length: 255 })
  name!: string;

  @Column('varchar', { length: 20 })
  algorithm!: KeyAlgorithm;

  @Column('text', { name: 'public_key' })
  publicKey!: string;

  @Column('char', { length: 64 })
  fingerprint!: string;

  /** AES-256-GCM: 12-byte IV, 16-byte tag, then the PKCS#8 PEM, with the key pair id as associated data. */
  @Column('bytea', { name: 'private_key_ciphertext', select: false })
  privateKeyCiphertext!: Buffer;

  @Column('varchar', { name: 'master_key_version', length: 64, select: false })
  masterKeyVersion!: string;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;
}
