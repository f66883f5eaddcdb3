import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { LicenseEntity } from '../licenses/license.entity';
import { EntitlementEntity } from './entitlement.entity';

/**
 * An entitlement a license holds of its own. A policy's entitlements live in policy_entitlements,
 * of the same shape; a license's entitlements are the union of both.
 */
@Entity({ name: 'license_entitlements' })
// The foreign key's check on an entitlement's delete, and "is it in use", read this index.
@Index('ix_license_entitlements_entitlement', ['entitlementId'])
export class LicenseEntitlementEntity {
  @PrimaryColumn('uuid', { name: 'license_id', primaryKeyConstraintName: 'pk_license_entitlements' })
  licenseId!: string;

  @PrimaryColumn('uuid', { name: 'entitlement_id', primaryKeyConstraintName: 'pk_license_entitlements' })
  entitlementId!: string;

  @ManyToOne(() => LicenseEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'license_id', foreignKeyConstraintName: 'fk_license_entitlements_license' })
  license?: LicenseEntity;

  /** RESTRICT: an entitlement that a license holds cannot be deleted (a 409). */
  @ManyToOne(() => EntitlementEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'entitlement_id', foreignKeyConstraintName: 'fk_license_entitlements_entitlement' })
  entitlement?: EntitlementEntity;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;
}
