import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { EntitlementEntity } from '../entitlements/entitlement.entity';
import { PolicyEntity } from './policy.entity';

/**
 * An entitlement a policy grants to every license of it. A license's entitlements are the union of
 * its policy's and its own (license_entitlements), read at once wherever a license is read.
 */
@Entity({ name: 'policy_entitlements' })
// The foreign key's check on an entitlement's delete, and "is it in use", read this index.
@Index('ix_policy_entitlements_entitlement', ['entitlementId'])
export class PolicyEntitlementEntity {
  @PrimaryColumn('uuid', { name: 'policy_id', primaryKeyConstraintName: 'pk_policy_entitlements' })
  policyId!: string;

  @PrimaryColumn('uuid', { name: 'entitlement_id', primaryKeyConstraintName: 'pk_policy_entitlements' })
  entitlementId!: string;

  @ManyToOne(() => PolicyEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'policy_id', foreignKeyConstraintName: 'fk_policy_entitlements_policy' })
  policy?: PolicyEntity;

  /** RESTRICT: an entitlement that a policy grants cannot be deleted (a 409). */
  @ManyToOne(() => EntitlementEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'entitlement_id', foreignKeyConstraintName: 'fk_policy_entitlements_entitlement' })
  entitlement?: EntitlementEntity;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;
}
