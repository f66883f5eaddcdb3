import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';

/**
 * The version of a product's revocation list: a counter bumped, in the transaction of the change,
 * by every change of a license's status (revoke, suspend, reinstate, expiry). Its row lock orders
 * those transactions, so a list read in one snapshot holds every change up to its version and no
 * other. No row: version 0.
 */
@Entity({ name: 'revocation_lists' })
export class RevocationListEntity {
  @PrimaryColumn('uuid', { name: 'product_id', primaryKeyConstraintName: 'pk_revocation_lists' })
  productId!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('bigint')
  version!: string;

  @Column({ ...TIMESTAMP, name: 'updated_at' })
  updatedAt!: Date;
}
