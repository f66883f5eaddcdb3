import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isUUID } from 'class-validator';
import { DEFAULT_CHECKOUT_TTL_SECONDS } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { OrganizationEntity } from './organization.entity';
import {
  Limit,
  LimitName,
  RateLimitOverrides,
  RateLimits,
  applyLimitChanges,
  defaultLimits,
  effectiveLimits,
} from './rate-limit-settings';

const MAX_CACHED_ORGANIZATIONS = 50_000;

export interface OrganizationLimits {
  id: string;
  name: string;
  overrides: RateLimitOverrides | null;
  effective: RateLimits;
}

/** What an organization decides for its credentials, beside its limits (`PATCH /organizations/current`). */
export interface OrganizationSettings {
  clientKeysLicenseActions: boolean;
  checkoutTtlSeconds: number;
}

/** What the request path reads of an organization. */
interface OrganizationPolicy {
  limits: RateLimits;
  settings: OrganizationSettings;
}

/**
 * Each organization's limits (the gateway's defaults, with the overrides an operator stored in
 * `identity.organizations.rate_limits`) and settings. Read on the request path from memory,
 * refreshed from PostgreSQL at most once per API_KEY_CACHE_TTL_MS per organization, exactly as API
 * keys are; a change of settings is broadcast (OrganizationSettingsService), and every gateway
 * reads them again at once.
 */
@Injectable()
export class OrganizationLimitsService {
  private readonly logger = new Logger(OrganizationLimitsService.name);
  private readonly defaults: OrganizationPolicy;
  private readonly cache = new Map<string, { policy: OrganizationPolicy; expiresAt: number }>();
  /** One query per organization however many requests wait for it. */
  private readonly loading = new Map<string, Promise<OrganizationPolicy>>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.defaults = {
      limits: defaultLimits(config),
      settings: { clientKeysLicenseActions: true, checkoutTtlSeconds: DEFAULT_CHECKOUT_TTL_SECONDS },
    };
  }

  /** Drops what this gateway cached of the organization; the next request reads it again. */
  forget(orgId: string): void {
    this.cache.delete(orgId);
  }

  /** Synchronous while cached, which is nearly always: the request path awaits nothing then. */
  limitsOf(orgId: string): RateLimits | Promise<RateLimits> {
    const policy = this.policyOf(orgId);
    return policy instanceof Promise ? policy.then(({ limits }) => limits) : policy.limits;
  }

  async settingsOf(orgId: string): Promise<OrganizationSettings> {
    return (await this.policyOf(orgId)).settings;
  }

  private policyOf(orgId: string): OrganizationPolicy | Promise<OrganizationPolicy> {
    const cached = this.cache.get(orgId);
    if (cached && cached.expiresAt > Date.now()) return cached.policy;
    let loading = this.loading.get(orgId);
    if (!loading) {
      loading = this.load(orgId).finally(() => this.loading.delete(orgId));
      this.loading.set(orgId, loading);
    }
    return loading;
  }

  private async load(orgId: string): Promise<OrganizationPolicy> {
    let row: OrganizationEntity | null;
    try {
      row = await this.dataSource.getRepository(OrganizationEntity).findOne({
        select: { id: true, rateLimits: true, clientKeysLicenseActions: true, checkoutTtlSeconds: true },
        where: { id: orgId },
      });
    } catch (error) {
      // The credential was just resolved, so this is a passing failure: the defaults serve, uncached.
      this.logger.warn({
        msg: 'organization limits and settings unavailable, using the defaults',
        org_id: orgId,
        err: error instanceof Error ? error.message : String(error),
      });
      return this.defaults;
    }
    const policy: OrganizationPolicy = {
      limits: effectiveLimits(this.defaults.limits, row?.rateLimits),
      settings: row
        ? {
            clientKeysLicenseActions: row.clientKeysLicenseActions,
            checkoutTtlSeconds: row.checkoutTtlSeconds,
          }
        : this.defaults.settings,
    };
    if (this.config.API_KEY_CACHE_TTL_MS > 0) {
      if (this.cache.size >= MAX_CACHED_ORGANIZATIONS) this.cache.clear();
      this.cache.set(orgId, { policy, expiresAt: Date.now() + this.config.API_KEY_CACHE_TTL_MS });
    }
    return policy;
  }

  /** For the operator CLI: an organization by id or by name. */
  async show(idOrName: string): Promise<OrganizationLimits> {
    const organization = await this.dataSource
      .getRepository(OrganizationEntity)
      .findOneBy(isUUID(idOrName, 'all') ? { id: idOrName } : { name: idOrName });
    if (!organization) throw DomainError.notFound('Organization', idOrName);
    return {
      id: organization.id,
      name: organization.name,
      overrides: organization.rateLimits,
      effective: effectiveLimits(this.defaults.limits, organization.rateLimits),
    };
  }

  /** Sets or drops (null) overrides; gateways apply them within API_KEY_CACHE_TTL_MS. */
  async update(idOrName: string, changes: ReadonlyMap<LimitName, Limit | null>): Promise<OrganizationLimits> {
    return this.dataSource.transaction(async (manager) => {
      const repository = manager.getRepository(OrganizationEntity);
      const organization = await repository.findOne({
        where: isUUID(idOrName, 'all') ? { id: idOrName } : { name: idOrName },
        lock: { mode: 'pessimistic_write' },
      });
      if (!organization) throw DomainError.notFound('Organization', idOrName);
      const overrides = applyLimitChanges(organization.rateLimits, changes);
      await repository.update({ id: organization.id }, { rateLimits: overrides });
      return {
        id: organization.id,
        name: organization.name,
        overrides,
        effective: effectiveLimits(this.defaults.limits, overrides),
      };
    });
  }
}
