import { Column, Entity, PrimaryColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';

/** The tenant. Every row of every service carries its id. */
@Entity({ name: 'organizations' })
@Unique('uq_organizations_name', ['name'])
export class OrganizationEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('varchar', { length: 255 })
  name!: string;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;
}
