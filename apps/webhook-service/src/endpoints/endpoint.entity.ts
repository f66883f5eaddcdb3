import { Column, DataSource, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';

/**
 * A webhook endpoint of an organization. Its signing secret is sealed with the service's master
 * key (AES-256-GCM, the endpoint id as associated data) and never selected unless asked for; the
 * previous secret is kept, sealed the same way, until `previous_secret_expires_at`.
 */
@Entity({ name: 'endpoints' })
@Index('ix_endpoints_org_created', ['orgId', 'createdAt', 'id'])
export class EndpointEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('varchar', { length: 2048 })
  url!: string;

  /** Exact event types, or `*`. */
  @Column('text', { array: true })
  events!: string[];

  @Column('varchar', { length: 500, nullable: true })
  description!: string | null;

  @Column('boolean', { default: true })
  enabled!: boolean;

  @Column('varchar', { name: 'disabled_reason', length: 200, nullable: true })
  disabledReason!: string | null;

  @Column('bytea', { name: 'secret_ciphertext', select: false })
  secretCiphertext!: Buffer;

  @Column('varchar', { name: 'secret_key_version', length: 64, select: false })
  secretKeyVersion!: string;

  @Column('bytea', { name: 'previous_secret_ciphertext', nullable: true, select: false })
  previousSecretCiphertext!: Buffer | null;

  @Column('varchar', { name: 'previous_secret_key_version', length: 64, nullable: true, select: false })
  previousSecretKeyVersion!: string | null;

  @Column({ ...TIMESTAMP, name: 'previous_secret_expires_at', nullable: true })
  previousSecretExpiresAt!: Date | null;

  /** Since when every attempt has failed (null once one succeeds): the clock of the disable rule. */
  @Column({ ...TIMESTAMP, name: 'failing_since', nullable: true })
  failingSince!: Date | null;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  @Column({ ...TIMESTAMP, name: 'updated_at' })
  updatedAt!: Date;
}

/** A table's qualified name for hand-written SQL, in whichever schema the DataSource places it. */
export function tableOf(dataSource: DataSource, entity: Function): string {
  const { schema, tableName } = dataSource.getMetadata(entity);
  return schema ? `"${schema}"."${tableName}"` : `"${tableName}"`;
}
