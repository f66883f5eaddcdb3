import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  Unique,
  ValueTransformer,
} from 'typeorm';
import { HardwareBinding, LICENSE_TYPES, LicenseType } from '@licensing/license-format';
import { LICENSE_STATUSES, LicenseStatus } from '@licensing/contracts';
import { TIMESTAMP, oneOf } from '@licensing/shared/database';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { PolicyEntity } from '../policies/policy.entity';

/** The limits a license can take from its policy or set itself: those it set are in `overridden`. */
export const INHERITABLE_LIMITS = ['max_seats', 'max_uses'] as const;
export type InheritableLimit = (typeof INHERITABLE_LIMITS)[number];

/** PostgreSQL answers a bigint as text; a count stays far below 2^53. */
const COUNT: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

@Entity({ name: 'licenses' })
@Unique('uq_licenses_serial', ['serial'])
@Index('ix_licenses_org_created', ['orgId', 'createdAt', 'id'])
@Index('ix_licenses_key_pair', ['keyPairId'])
// Also the index of every look-up by product (the product delete's foreign key check included).
@Index('ix_licenses_product_list_version', ['productId', 'listVersion'])
@Index('ix_licenses_policy', ['policyId'])
@Check('ck_licenses_status', oneOf('status', LICENSE_STATUSES))
@Check('ck_licenses_type', oneOf('license_type', LICENSE_TYPES))
@Check('ck_licenses_revoked_at', `(status = 'revoked') = (revoked_at IS NOT NULL)`)
@Check('ck_licenses_validity', 'valid_until IS NULL OR valid_until >= valid_from')
@Check('ck_licenses_seats', 'max_seats > 0')
@Check('ck_licenses_uses', 'uses >= 0')
@Check('ck_licenses_max_uses', 'max_uses IS NULL OR max_uses >= 0')
export class LicenseEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('uuid', { name: 'product_id' })
  productId!: string;

  @ManyToOne(() => CatalogProductEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'product_id', foreignKeyConstraintName: 'fk_licenses_product' })
  product?: CatalogProductEntity;

  @Column('varchar', { length: 160 })
  serial!: string;

  @Column('varchar', { name: 'license_type', length: 20 })
  licenseType!: LicenseType;

  @Column('varchar', { name: 'customer_id', length: 255, nullable: true })
  customerId!: string | null;

  @Column('varchar', { name: 'customer_email', length: 320, nullable: true })
  customerEmail!: string | null;

  @Column('varchar', { length: 20 })
  status!: LicenseStatus;

  @Column({ ...TIMESTAMP, name: 'valid_from' })
  validFrom!: Date;

  @Column({ ...TIMESTAMP, name: 'valid_until', nullable: true })
  validUntil!: Date | null;

  @Column('text', { array: true })
  features!: string[];

  @Column('integer', { name: 'max_seats' })
  maxSeats!: number;

  @Column('jsonb', { name: 'hardware_binding', nullable: true })
  hardwareBinding!: HardwareBinding | null;

  /** Not a foreign key: a key pair may be deleted once every license it signed is revoked. */
  @Column('uuid', { name: 'key_pair_id' })
  keyPairId!: string;

  /** The signed file (compact JWS) exactly as issued. */
  @Column('text')
  jws!: string;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  @Column({ ...TIMESTAMP, name: 'updated_at' })
  updatedAt!: Date;

  @Column({ ...TIMESTAMP, name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;

  /**
   * The version of its product's revocation list that last changed this license's entry (its
   * status), and when: what a delta since an older version is made of. Null: never listed.
   */
  @Column('bigint', { name: 'list_version', nullable: true })
  listVersion!: string | null;

  @Column({ ...TIMESTAMP, name: 'list_changed_at', nullable: true })
  listChangedAt!: Date | null;

  /**
   * Uses counted since `uses_period_start`. Only one conditional UPDATE adds to it
   * (LicenseUsageService), so it is exact under concurrency. A bigint: an unlimited license may count past 2^31.
   */
  @Column('bigint', { default: 0, transformer: COUNT })
  uses!: number;

  /** Null: no limit. */
  @Column('bigint', { name: 'max_uses', nullable: true, transformer: COUNT })
  maxUses!: number | null;

  /**
   * When the count in `uses` began: the license's creation, its last reset, or the start of the
   * usage period of the first increment after a boundary. Uses counted before the current period of
   * its policy's `uses_reset` count as 0 (uses-period.ts). Null: not recorded (a license from before
   * usage periods), which counts as before any period.
   */
  @Column({ ...TIMESTAMP, name: 'uses_period_start', nullable: true })
  usesPeriodStart!: Date | null;

  /**
   * The license's entitlement codes, sorted. Not a column: read from license_entitlements by
   * `loadEntitlements` wherever a license is answered or signed.
   */
  entitlements?: string[];

  /** The policy the license follows; null: none, and the license keeps the rules of a plain license. */
  @Column('uuid', { name: 'policy_id', nullable: true })
  policyId!: string | null;

  @ManyToOne(() => PolicyEntity, { onDelete: 'RESTRICT', nullable: true })
  @JoinColumn({ name: 'policy_id', foreignKeyConstraintName: 'fk_licenses_policy' })
  policy?: PolicyEntity | null;

  /**
   * The limits of INHERITABLE_LIMITS that the license's create or PATCH set itself: a policy change
   * leaves them alone. The others follow the policy.
   */
  @Column('text', { array: true, default: () => "'{}'" })
  overridden!: InheritableLimit[];

  @Column({ ...TIMESTAMP, name: 'last_check_in_at', nullable: true })
  lastCheckInAt!: Date | null;
}
