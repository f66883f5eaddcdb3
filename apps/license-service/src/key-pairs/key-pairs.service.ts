import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, Not } from 'typeorm';
import {
  CreateKeyPairDto,
  KeyPairListView,
  KeyPairView,
  MessageView,
  PageQueryDto,
  pageOf,
} from '@licensing/contracts';
import { generateKeyPair } from '@licensing/license-format';
import { isForeignKeyViolation, pageWindow } from '@licensing/shared/database';
import { auditChanges, recordAudit, recordEvent } from '@licensing/shared/events';
import { DomainError } from '@licensing/shared/errors';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { LicenseEntity } from '../licenses/license.entity';
import { MasterKeyVault } from '@licensing/shared/crypto';
import { SigningKeysService } from '../signing/signing-keys.service';
import { KeyPairEntity } from './key-pair.entity';

function toKeyPairView(keyPair: KeyPairEntity): KeyPairView {
  return {
    id: keyPair.id,
    name: keyPair.name,
    algorithm: keyPair.algorithm,
    public_key: keyPair.publicKey,
    fingerprint: keyPair.fingerprint,
    created_at: keyPair.createdAt.toISOString(),
  };
}

/** Signing key pairs: generated here, private halves sealed by the vault, never returned. */
@Injectable()
export class KeyPairsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly vault: MasterKeyVault,
    private readonly signingKeys: SigningKeysService,
  ) {}

  async create(orgId: string, dto: CreateKeyPairDto): Promise<KeyPairView> {
    const algorithm = dto.algorithm ?? 'ed25519';
    const generated = await generateKeyPair(algorithm);
    const id = randomUUID();
    const sealed = this.vault.seal(id, generated.privateKeyPem);
    const keyPair = Object.assign(new KeyPairEntity(), {
      id,
      orgId,
      name: dto.name ?? `${algorithm} key pair`,
      algorithm,
      publicKey: generated.publicKeyPem,
      fingerprint: generated.fingerprint,
      privateKeyCiphertext: sealed.ciphertext,
      masterKeyVersion: sealed.version,
      createdAt: new Date(),
    });
    const view = toKeyPairView(keyPair);
    await this.dataSource.transaction(async (manager) => {
      await manager.insert(KeyPairEntity, keyPair);
      await recordEvent(manager, {
        type: 'key_pair.created',
        orgId,
        data: view,
        occurredAt: keyPair.createdAt,
      });
      await recordAudit(manager, {
        orgId,
        action: 'created',
        resourceType: 'key_pair',
        resourceId: id,
        changes: auditChanges(null, view),
        occurredAt: keyPair.createdAt,
      });
    });
    return view;
  }

  async list(orgId: string, query: PageQueryDto): Promise<KeyPairListView> {
    const [keyPairs, total] = await this.dataSource.getRepository(KeyPairEntity).findAndCount({
      where: { orgId },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...pageWindow(pageOf(query)),
    });
    return { key_pairs: keyPairs.map(toKeyPairView), total };
  }

  async get(orgId: string, id: string): Promise<KeyPairView> {
    const keyPair = await this.dataSource.getRepository(KeyPairEntity).findOneBy({ id, orgId });
    if (!keyPair) throw DomainError.notFound('Key pair', id);
    return toKeyPairView(keyPair);
  }

  /**
   * Refused while a product uses the key pair (also a foreign key) or while any license it signed
   * is not revoked, so that no live license becomes unverifiable.
   */
  async delete(orgId: string, id: string): Promise<MessageView> {
    try {
      await this.dataSource.transaction(async (manager) => {
        const keyPair = await manager.findOne(KeyPairEntity, {
          where: { id, orgId },
          lock: { mode: 'pessimistic_write' },
        });
        if (!keyPair) throw DomainError.notFound('Key pair', id);
        if (await manager.existsBy(CatalogProductEntity, { keyPairId: id })) {
          throw DomainError.conflict(`Key pair ${id} is assigned to a product`);
        }
        if (await manager.existsBy(LicenseEntity, { keyPairId: id, status: Not('revoked') })) {
          throw DomainError.conflict(`Key pair ${id} signed licenses that are not revoked`);
        }
        await manager.delete(KeyPairEntity, { id });
        const view = toKeyPairView(keyPair);
        await recordEvent(manager, { type: 'key_pair.deleted', orgId, data: view });
        await recordAudit(manager, {
          orgId,
          action: 'deleted',
          resourceType: 'key_pair',
          resourceId: id,
          changes: auditChanges(view, null),
        });
      });
    } catch (error) {
      if (isForeignKeyViolation(error)) throw DomainError.conflict(`Key pair ${id} is assigned to a product`);
      throw error;
    }
    this.signingKeys.forget(id);
    return { message: `Key pair ${id} deleted` };
  }
}
