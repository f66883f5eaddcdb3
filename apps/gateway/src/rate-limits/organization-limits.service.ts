import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isUUID } from 'class-validator';
import { DomainError } from '@licensing/shared/errors';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { OrganizationEntity } from '../identity/organization.entity';
import {
  Limit,
  LimitName,
  RateLimitOverrides,
  RateLimits,
  applyLimitChanges,
  defaultLimits,
  effectiveLimits,
} from './rate-limits';

const MAX_CACHED_ORGANIZATIONS = 50_000;

export interface OrganizationLimits {
  id: string;
  name: string;
  overrides: RateLimitOverrides | null;
  effective: RateLimits;
}

/**
 * Each organization's limits: the gateway's defaults, with the overrides an operator stored in
 * `identity.organizations.rate_limits`. Read on the request path from memory, refreshed from
 * PostgreSQL at most once per API_KEY_CACHE_TTL_MS per organization, exactly as API keys are.
 */
@Injectable()
export class OrganizationLimitsService {
  private readonly logger = new Logger(OrganizationLimitsService.name);
  private readonly defaults: RateLimits;
  private readonly cache = new Map<string, { limits: RateLimits; expiresAt: number }>();
  /** One query per organization however many requests wait for it. */
  private readonly loading = new Map<string, Promise<RateLimits>>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.defaults = defaultLimits(config);
  }

  /** Synchronous while cached, which is nearly always: the request path awaits nothing then. */
  limitsOf(orgId: string): RateLimits | Promise<RateLimits> {
    const cached = this.cache.get(orgId);
    if (cached && cached.expiresAt > Date.now()) return cached.limits;
    let loading = this.loading.get(orgId);
    if (!loading) {
      loading = this.load(orgId).finally(() => this.loading.delete(orgId));
      this.loading.set(orgId, loading);
    }
    return loading;
  }

  private async load(orgId: string): Promise<RateLimits> {
    let stored: unknown;
    try {
      const row = await this.dataSource
        .getRepository(OrganizationEntity)
        .findOne({ select: { id: true, rateLimits: true }, where: { id: orgId } });
      stored = row?.rateLimits;
    } catch (error) {
      // The API key was just resolved, so this is a passing failure: the defaults serve, uncached.
      this.logger.warn({
        msg: 'organization rate limits unavailable, using the defaults',
        org_id: orgId,
        err: error instanceof Error ? error.message : String(error),
      });
      return this.defaults;
    }
    const limits = effectiveLimits(this.defaults, stored);
    if (this.config.API_KEY_CACHE_TTL_MS > 0) {
      if (this.cache.size >= MAX_CACHED_ORGANIZATIONS) this.cache.clear();
      this.cache.set(orgId, { limits, expiresAt: Date.now() + this.config.API_KEY_CACHE_TTL_MS });
    }
    return limits;
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
      effective: effectiveLimits(this.defaults, organization.rateLimits),
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
        effective: effectiveLimits(this.defaults, overrides),
      };
    });
  }
}
