import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { LICENSE_TYPES, LicenseType } from '@licensing/license-format';
import {
  MACHINE_MATCHING_RULES,
  MachineMatchingRule,
  OVERAGE_RULES,
  OverageRule,
  USES_RESET_PERIODS,
  UsesResetPeriod,
} from '@licensing/contracts';
import { TIMESTAMP, oneOf } from '@licensing/shared/database';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';

/**
 * A product's licensing model. Licenses made from it copy its terms at issue (license_type,
 * valid_until, max_seats, max_uses); its limits (processes, heartbeats, check-ins, overage, matching) are
 * read from this row on every online path, so a change applies at once.
 */
@Entity({ name: 'policies' })
@Index('ix_policies_org_created', ['orgId', 'createdAt', 'id'])
@Index('ix_policies_product', ['productId'])
@Check('ck_policies_type', oneOf('license_type', LICENSE_TYPES))
@Check('ck_policies_overage', oneOf('overage', OVERAGE_RULES))
@Check('ck_policies_machine_matching', oneOf('machine_matching', MACHINE_MATCHING_RULES))
@Check('ck_policies_machines', 'max_machines > 0')
@Check('ck_policies_uses_reset', `uses_reset IS NULL OR ${oneOf('uses_reset', USES_RESET_PERIODS)}`)
@Check('ck_policies_max_uses', 'max_uses IS NULL OR max_uses >= 0')
@Check('ck_policies_perpetual', `license_type <> 'perpetual' OR duration_days IS NULL`)
export class PolicyEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('uuid', { name: 'product_id' })
  productId!: string;

  @ManyToOne(() => CatalogProductEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'product_id', foreignKeyConstraintName: 'fk_policies_product' })
  product?: CatalogProductEntity;

  @Column('varchar', { length: 255 })
  name!: string;

  @Column('varchar', { name: 'license_type', length: 20 })
  licenseType!: LicenseType;

  @Column('integer', { name: 'duration_days', nullable: true })
  durationDays!: number | null;

  @Column('integer', { name: 'max_machines' })
  maxMachines!: number;

  @Column('integer', { name: 'max_processes', nullable: true })
  maxProcesses!: number | null;

  /** The max_uses of its licenses that do not set their own (INHERITABLE_LIMITS). Null: no limit. */
  @Column('integer', { name: 'max_uses', nullable: true })
  maxUses!: number | null;

  /** When its licenses' uses go back to 0 (UTC). Null: never. */
  @Column('varchar', { name: 'uses_reset', length: 10, nullable: true })
  usesReset!: UsesResetPeriod | null;

  /**
   * The entitlement codes it grants, sorted. Not a column: read from policy_entitlements by
   * `loadPolicyEntitlements` wherever a policy is answered.
   */
  entitlements?: string[];

  @Column('integer', { name: 'heartbeat_interval_seconds', nullable: true })
  heartbeatIntervalSeconds!: number | null;

  @Column('integer', { name: 'heartbeat_grace_seconds', default: 0 })
  heartbeatGraceSeconds!: number;

  @Column('integer', { name: 'check_in_interval_days', nullable: true })
  checkInIntervalDays!: number | null;

  @Column('varchar', { length: 10, default: 'none' })
  overage!: OverageRule;

  @Column('varchar', { name: 'machine_matching', length: 10, default: 'all' })
  machineMatching!: MachineMatchingRule;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  @Column({ ...TIMESTAMP, name: 'updated_at' })
  updatedAt!: Date;
}
