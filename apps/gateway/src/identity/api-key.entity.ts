import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { ApiKeyScope } from '../http/auth-context';
import { OrganizationEntity } from './organization.entity';

/** Only the SHA-256 of a key is stored; the key itself is shown once, when it is created. */
@Entity({ name: 'api_keys' })
@Unique('uq_api_keys_hash', ['keyHash'])
@Index('ix_api_keys_org_created', ['orgId', 'createdAt', 'id'])
@Check('ck_api_keys_scopes', `cardinality(scopes) > 0 AND scopes <@ ARRAY['admin', 'read', 'client']::text[]`)
export class ApiKeyEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'org_id', foreignKeyConstraintName: 'fk_api_keys_org' })
  organization?: OrganizationEntity;

  @Column('varchar', { length: 255 })
  name!: string;

  @Column('text', { array: true })
  scopes!: ApiKeyScope[];

  @Column('char', { name: 'key_hash', length: 64 })
  keyHash!: string;

  @Column('varchar', { length: 10 })
  prefix!: string;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  @Column({ ...TIMESTAMP, name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;
}
