import { Check, Column, Entity, PrimaryColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import type { RateLimitOverrides } from './rate-limit-settings';

/** The tenant. Every row of every service carries its id. */
@Entity({ name: 'organizations' })
@Unique('uq_organizations_name', ['name'])
@Check('ck_organizations_checkout_ttl', 'checkout_ttl_seconds BETWEEN 3600 AND 31536000')
export class OrganizationEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('varchar', { length: 255 })
  name!: string;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  /** Limits that differ from the gateway's defaults (`npm run operator -- org limits`); null: none. */
  @Column('jsonb', { name: 'rate_limits', nullable: true })
  rateLimits!: RateLimitOverrides | null;

  /** Whether `client` API keys may call the routes that act on one license (else only tokens may). */
  @Column('boolean', { name: 'client_keys_license_actions', default: true })
  clientKeysLicenseActions!: boolean;

  /** How long an air-gapped activation file (and a checked-out license file) stays valid. */
  @Column('integer', { name: 'checkout_ttl_seconds', default: 2_592_000 })
  checkoutTtlSeconds!: number;
}
