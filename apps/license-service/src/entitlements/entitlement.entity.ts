import { Column, Entity, Index, PrimaryColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';

/** One entry of an organization's entitlement catalog: a named capability that licenses grant. */
@Entity({ name: 'entitlements' })
@Unique('uq_entitlements_org_code', ['orgId', 'code'])
@Index('ix_entitlements_org_created', ['orgId', 'createdAt', 'id'])
export class EntitlementEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  /** Immutable: license files carry it, so it must keep meaning the same thing. */
  @Column('varchar', { length: 100 })
  code!: string;

  @Column('varchar', { length: 255 })
  name!: string;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  @Column({ ...TIMESTAMP, name: 'updated_at' })
  updatedAt!: Date;
}
