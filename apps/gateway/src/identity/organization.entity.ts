import { Column, Entity, PrimaryColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import type { RateLimitOverrides } from '../rate-limits/rate-limits';

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

  /** Limits that differ from the gateway's defaults (`npm run cli -- org limits`); null: none. */
  @Column('jsonb', { name: 'rate_limits', nullable: true })
  rateLimits!: RateLimitOverrides | null;
}
