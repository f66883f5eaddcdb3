import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import {
  Broadcasts,
  CreateLicenseTokenMessage,
  CreatedLicenseTokenView,
  LicenseTokenListView,
  LicenseTokenView,
  ListLicenseTokensMessage,
  MessageView,
  ResolveCredentialDto,
  ResolvedCredential,
  pageOf,
} from '@licensing/contracts';
import { pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { auditChanges, recordAudit } from '@licensing/shared/events';
import { BusClient } from '@licensing/shared/messaging';
import { ActivationEntity } from '../activations/activation.entity';
import { LicenseEntity } from '../licenses/license.entity';
import { LicenseTokenEntity } from './license-token.entity';
import { newToken } from './tokens';

/**
 * License tokens (one license) and the resolution of license and machine tokens for the gateway,
 * which caches what it resolves. Revoking a token tells every gateway at once.
 */
@Injectable()
export class CredentialsService {
  private readonly logger = new Logger(CredentialsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: BusClient,
  ) {}

  createLicenseToken(orgId: string, message: CreateLicenseTokenMessage): Promise<CreatedLicenseTokenView> {
    const expiresAt = message.expires_at === undefined ? null : new Date(message.expires_at);
    const now = new Date();
    if (expiresAt && expiresAt <= now) {
      throw DomainError.validation([{ field: 'expires_at', message: 'expires_at must be in the future' }]);
    }
    return this.dataSource.transaction(async (manager) => {
      await this.ownLicense(orgId, message.license_id);
      const { token, hash, prefix } = newToken('lt');
      const entity = Object.assign(new LicenseTokenEntity(), {
        id: randomUUID(),
        orgId,
        licenseId: message.license_id,
        name: message.name ?? null,
        tokenHash: hash,
        prefix,
        expiresAt,
        createdAt: now,
        revokedAt: null,
      });
      await manager.insert(LicenseTokenEntity, entity);
      const view = toLicenseTokenView(entity);
      await recordAudit(manager, {
        orgId,
        action: 'created',
        resourceType: 'license_token',
        resourceId: entity.id,
        changes: auditChanges(null, view),
        occurredAt: now,
      });
      return { ...view, token };
    });
  }

  /** A license's tokens that still work, newest first (never the tokens themselves). */
  async listLicenseTokens(orgId: string, message: ListLicenseTokensMessage): Promise<LicenseTokenListView> {
    await this.ownLicense(orgId, message.license_id);
    const [tokens, total] = await this.dataSource.getRepository(LicenseTokenEntity).findAndCount({
      where: { orgId, licenseId: message.license_id, revokedAt: IsNull() },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...pageWindow(pageOf(message)),
    });
    return { license_tokens: tokens.map(toLicenseTokenView), total };
  }

  async revokeLicenseToken(orgId: string, id: string): Promise<MessageView> {
    const tokenHash = await this.dataSource.transaction(async (manager) => {
      const revokedAt = new Date();
      const { raw } = await manager
        .getRepository(LicenseTokenEntity)
        .createQueryBuilder()
        .update()
        .set({ revokedAt })
        .where('id = :id AND org_id = :orgId AND revoked_at IS NULL', { id, orgId })
        .returning('token_hash')
        .execute();
      const rows = raw as { token_hash: string }[];
      if (rows.length === 0) throw DomainError.notFound('License token', id);
      await recordAudit(manager, {
        orgId,
        action: 'revoked',
        resourceType: 'license_token',
        resourceId: id,
        changes: { revoked_at: { from: null, to: revokedAt.toISOString() } },
        occurredAt: revokedAt,
      });
      return rows[0]!.token_hash;
    });
    this.tokenRevoked(tokenHash);
    this.logger.log({ msg: 'license token revoked', token_id: id });
    return { message: `License token ${id} revoked` };
  }

  /** Tells every gateway to drop a token it may have cached (after the change committed). */
  tokenRevoked(tokenHash: string | null): void {
    if (tokenHash) this.bus.publish(Broadcasts.tokenRevoked, { token_hash: tokenHash });
  }

  /** A working token by its hash, with what it reaches; null for anything else. */
  async resolve({ kind, token_hash }: ResolveCredentialDto): Promise<ResolvedCredential | null> {
    if (kind === 'license') {
      const token = await this.dataSource.getRepository(LicenseTokenEntity).findOne({
        relations: { license: true },
        where: { tokenHash: token_hash, revokedAt: IsNull() },
      });
      if (!token?.license || (token.expiresAt && token.expiresAt <= new Date())) return null;
      return {
        kind,
        id: token.id,
        org_id: token.orgId,
        name: token.name ?? `license token ${token.prefix}`,
        prefix: token.prefix,
        license_id: token.licenseId,
        serial: token.license.serial,
        product_id: token.license.productId,
        expires_at: token.expiresAt?.toISOString() ?? null,
      };
    }
    const activation = await this.dataSource.getRepository(ActivationEntity).findOne({
      relations: { license: true },
      where: { tokenHash: token_hash },
    });
    if (!activation?.license) return null;
    return {
      kind,
      id: activation.id,
      org_id: activation.orgId,
      name: `machine ${activation.fingerprint}`.slice(0, 255),
      prefix: 'mt_',
      license_id: activation.licenseId,
      serial: activation.license.serial,
      product_id: activation.license.productId,
      activation_id: activation.id,
      fingerprint: activation.fingerprint,
      expires_at: null,
    };
  }

  private async ownLicense(orgId: string, licenseId: string): Promise<void> {
    const exists = await this.dataSource.getRepository(LicenseEntity).existsBy({ id: licenseId, orgId });
    if (!exists) throw DomainError.notFound('License', licenseId);
  }
}

function toLicenseTokenView(token: LicenseTokenEntity): LicenseTokenView {
  return {
    id: token.id,
    license_id: token.licenseId,
    name: token.name,
    prefix: token.prefix,
    expires_at: token.expiresAt?.toISOString() ?? null,
    created_at: token.createdAt.toISOString(),
  };
}
