import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { MessageView, PageQueryDto, Broadcasts, pageOf } from '@licensing/contracts';
import { pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { BusClient } from '@licensing/shared/messaging';
import { auditChanges } from '@licensing/shared/events';
import { AuditEventsService } from '../audit/audit-events.service';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyListView, CreateApiKeyDto, CreatedApiKeyView, CurrentApiKeyView } from './api-key.dto';
import { API_KEY_PATTERN, hashApiKey, issueApiKey, toApiKeyView } from './api-key-issuer';
import { AuthContext } from '../http/auth-context';

const MAX_CACHED_KEYS = 50_000;

/**
 * API keys: issued, listed and revoked per organization, and resolved on every request. A resolved
 * key is cached briefly so that authentication costs no database round trip on the hot paths;
 * revocation evicts it on every gateway at once.
 */
@Injectable()
export class ApiKeysService implements OnApplicationBootstrap {
  private readonly logger = new Logger(ApiKeysService.name);
  private readonly cache = new Map<string, { auth: AuthContext; expiresAt: number }>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: BusClient,
    private readonly audit: AuditEventsService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.bus.subscribe(Broadcasts.apiKeyRevoked, ({ key_hash }) => this.cache.delete(key_hash));
  }

  async authenticate(key: string): Promise<AuthContext | undefined> {
    if (!API_KEY_PATTERN.test(key)) return undefined;
    const hash = hashApiKey(key);
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > Date.now()) return cached.auth;
    const row = await this.dataSource.getRepository(ApiKeyEntity).findOne({
      select: { id: true, orgId: true, scopes: true, prefix: true, name: true },
      where: { keyHash: hash, revokedAt: IsNull() },
    });
    if (!row) {
      this.cache.delete(hash);
      return undefined;
    }
    const auth: AuthContext = {
      orgId: row.orgId,
      keyId: row.id,
      prefix: row.prefix,
      name: row.name,
      scopes: row.scopes,
      reach: { kind: 'organization', admin: row.scopes.includes('admin') },
    };
    if (this.config.API_KEY_CACHE_TTL_MS > 0) {
      if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear();
      this.cache.set(hash, { auth, expiresAt: Date.now() + this.config.API_KEY_CACHE_TTL_MS });
    }
    return auth;
  }

  /** The key and its audit entry are one transaction. */
  create(orgId: string, dto: CreateApiKeyDto): Promise<CreatedApiKeyView> {
    return this.dataSource.transaction(async (manager) => {
      const created = await issueApiKey(manager, orgId, dto.name, dto.scopes);
      const { key: _shownOnce, ...view } = created;
      await this.audit.record(manager, {
        orgId,
        action: 'created',
        resourceType: 'api_key',
        resourceId: created.id,
        changes: auditChanges(null, view),
        occurredAt: new Date(created.created_at),
      });
      return created;
    });
  }

  async list(orgId: string, query: PageQueryDto): Promise<ApiKeyListView> {
    const [keys, total] = await this.dataSource.getRepository(ApiKeyEntity).findAndCount({
      where: { orgId, revokedAt: IsNull() },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...pageWindow(pageOf(query)),
    });
    return { api_keys: keys.map(toApiKeyView), total };
  }

  /** The calling key, read again (not from the cache): a key revoked meanwhile is a `401`. */
  async current(auth: AuthContext): Promise<CurrentApiKeyView> {
    const key = await this.dataSource.getRepository(ApiKeyEntity).findOne({
      relations: { organization: true },
      where: { id: auth.keyId, orgId: auth.orgId, revokedAt: IsNull() },
    });
    if (!key?.organization)
      throw new DomainError('unauthorized', 'The API key is unknown or has been revoked');
    return { ...toApiKeyView(key), org_id: auth.orgId, org_name: key.organization.name };
  }

  async revoke(orgId: string, id: string): Promise<MessageView> {
    const keyHash = await this.dataSource.transaction(async (manager) => {
      const revokedAt = new Date();
      const { raw } = await manager
        .getRepository(ApiKeyEntity)
        .createQueryBuilder()
        .update()
        .set({ revokedAt })
        .where('id = :id AND org_id = :orgId AND revoked_at IS NULL', { id, orgId })
        .returning('key_hash')
        .execute();
      const rows = raw as { key_hash: string }[];
      if (rows.length === 0) throw DomainError.notFound('API key', id);
      await this.audit.record(manager, {
        orgId,
        action: 'revoked',
        resourceType: 'api_key',
        resourceId: id,
        changes: { revoked_at: { from: null, to: revokedAt.toISOString() } },
        occurredAt: revokedAt,
      });
      return rows[0].key_hash;
    });
    this.cache.delete(keyHash);
    this.bus.publish(Broadcasts.apiKeyRevoked, { key_hash: keyHash });
    this.logger.log({ msg: 'api key revoked', key_id: id });
    return { message: `API key ${id} revoked` };
  }
}
