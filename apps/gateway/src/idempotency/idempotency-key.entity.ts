import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { OrganizationEntity } from '../identity/organization.entity';

/** The response headers a replay repeats (content-type follows from the status). */
export type ReplayedHeaders = Record<string, string>;

/**
 * One Idempotency-Key of an organization: claimed while its first request runs (`status` null),
 * then the answer that request got, replayed to every repeat until `expires_at`. A 5xx is never
 * stored: the claim is released and a retry runs again.
 */
@Entity({ name: 'idempotency_keys' })
@Unique('uq_idempotency_keys_org_key', ['orgId', 'key'])
@Index('ix_idempotency_keys_expires', ['expiresAt'])
@Check('ck_idempotency_keys_status', `status IS NULL OR status BETWEEN 200 AND 499`)
export class IdempotencyKeyEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'org_id', foreignKeyConstraintName: 'fk_idempotency_keys_org' })
  organization?: OrganizationEntity;

  @Column('varchar', { length: 255 })
  key!: string;

  /** Method and route template, e.g. `POST /v1/licenses` (both URL prefixes are one route). */
  @Column('varchar', { length: 255 })
  route!: string;

  /** SHA-256 of the request body's canonical JSON. */
  @Column('char', { name: 'request_hash', length: 64 })
  requestHash!: string;

  /** Who holds the claim: changes when an abandoned claim is taken over, so a late owner cannot overwrite. */
  @Column('uuid', { name: 'claim_token' })
  claimToken!: string;

  /** When the claim was taken; a claim still running a lease later is deemed abandoned. */
  @Column({ ...TIMESTAMP, name: 'locked_at' })
  lockedAt!: Date;

  @Column('smallint', { nullable: true })
  status!: number | null;

  /** `json`, not `jsonb`: a replay repeats the first body member for member, in its order. */
  @Column('json', { name: 'response_body', nullable: true })
  responseBody!: object | null;

  @Column('jsonb', { name: 'response_headers', nullable: true })
  responseHeaders!: ReplayedHeaders | null;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  @Column({ ...TIMESTAMP, name: 'expires_at' })
  expiresAt!: Date;
}
