import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Broadcasts, MessageView } from '@licensing/contracts';
import { MasterKeyVault } from '@licensing/shared/crypto';
import { isUniqueViolation } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { auditChanges } from '@licensing/shared/events';
import { BusClient } from '@licensing/shared/messaging';
import { AuditEventsService } from '../audit/audit-events.service';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { ResponseKeyJwk } from './response-key.dto';
import { ResponseKeyEntity, ResponseKeyStatus } from './response-key.entity';
import { AnswerSigner } from './signed-answer';

/** What a gateway holds of an organization's keys: the one that signs, and the published set. */
interface OrganizationKeys {
  signer: AnswerSigner;
  jwks: ResponseKeyJwk[];
}

const MAX_CACHED_ORGANIZATIONS = 10_000;
const ORDER: Record<ResponseKeyStatus, number> = { active: 0, next: 1, retired: 2 };

/**
 * Organizations' response keys. The active key is created on first use; an admin rotates it in two
 * steps (a `next` key published first, then activated) and deletes retired ones. Each gateway
 * keeps an organization's parsed keys in memory (signing an answer costs no query and no PEM
 * parse) until a change is broadcast. Concurrent first uses in one process share one load.
 */
@Injectable()
export class ResponseKeysService implements OnApplicationBootstrap {
  private readonly vault: MasterKeyVault;
  private readonly keys = new Map<string, OrganizationKeys>();
  private readonly loading = new Map<string, Promise<OrganizationKeys>>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly bus: BusClient,
    private readonly audit: AuditEventsService,
  ) {
    this.vault = new MasterKeyVault(config.RESPONSE_MASTER_KEYS, 'RESPONSE_MASTER_KEYS');
  }

  onApplicationBootstrap(): void {
    this.bus.subscribe(Broadcasts.responseKeysChanged, ({ org_id }) => this.keys.delete(org_id));
  }

  /** The organization's signing key when this process holds it already: the hot path's only lookup. */
  cached(orgId: string): AnswerSigner | undefined {
    return this.keys.get(orgId)?.signer;
  }

  async signer(orgId: string): Promise<AnswerSigner> {
    return (this.keys.get(orgId) ?? (await this.load(orgId))).signer;
  }

  /** The organization's public response keys, as a JWK Set: the active key first, then the next, then the retired. */
  async jwks(orgId: string): Promise<{ keys: ResponseKeyJwk[] }> {
    return { keys: (this.keys.get(orgId) ?? (await this.load(orgId))).jwks };
  }

  /** Publishes a `next` key: in the set at once, signing only once activated. One at a time. */
  async createNext(orgId: string): Promise<ResponseKeyJwk> {
    await this.load(orgId); // the active key exists first, so that the new one is never the first
    const row = this.newKey(orgId, 'next');
    try {
      await this.dataSource.transaction(async (manager) => {
        await manager.insert(ResponseKeyEntity, row);
        await this.record(manager, orgId, 'created', row.id, auditChanges(null, { status: 'next' }));
      });
    } catch (error) {
      if (isUniqueViolation(error, 'uq_response_keys_org_next')) {
        throw DomainError.conflict('The organization has a next response key already: activate or delete it');
      }
      throw error;
    }
    this.changed(orgId);
    return toJwk(row);
  }

  /** Makes a next (or retired) key the signing one; the key that signed until now is retired. */
  async activate(orgId: string, kid: string): Promise<{ keys: ResponseKeyJwk[] }> {
    await this.dataSource.transaction(async (manager) => {
      const target = await this.lockOwn(manager, orgId, kid);
      if (target.status === 'active') return;
      await manager.update(ResponseKeyEntity, { orgId, status: 'active' }, { status: 'retired' });
      await manager.update(ResponseKeyEntity, { id: kid }, { status: 'active' });
      await this.record(manager, orgId, 'rotated', kid, {
        status: { from: target.status, to: 'active' },
      });
    });
    this.changed(orgId);
    return this.jwks(orgId);
  }

  /** Deletes a next or retired key: answers it signed no longer verify with the published set. */
  async delete(orgId: string, kid: string): Promise<MessageView> {
    await this.dataSource.transaction(async (manager) => {
      const target = await this.lockOwn(manager, orgId, kid);
      if (target.status === 'active') {
        throw DomainError.conflict('The active response key signs answers: activate another one first');
      }
      await manager.delete(ResponseKeyEntity, { id: kid });
      await this.record(manager, orgId, 'deleted', kid, auditChanges({ status: target.status }, null));
    });
    this.changed(orgId);
    return { message: `Response key ${kid} deleted` };
  }

  private async lockOwn(manager: EntityManager, orgId: string, kid: string): Promise<ResponseKeyEntity> {
    // Every key of the organization, in one order: two rotations at once wait for each other.
    const keys = await manager.find(ResponseKeyEntity, {
      where: { orgId },
      order: { id: 'ASC' },
      lock: { mode: 'pessimistic_write' },
    });
    const target = keys.find((key) => key.id === kid);
    if (!target) throw DomainError.notFound('Response key', kid);
    return target;
  }

  private record(
    manager: EntityManager,
    orgId: string,
    action: 'created' | 'rotated' | 'deleted',
    kid: string,
    changes: Parameters<AuditEventsService['record']>[1]['changes'],
  ): Promise<void> {
    return this.audit.record(manager, {
      orgId,
      action,
      resourceType: 'response_key',
      resourceId: kid,
      changes,
    });
  }

  /** Drops this gateway's copy, and every other gateway's. */
  private changed(orgId: string): void {
    this.keys.delete(orgId);
    this.bus.publish(Broadcasts.responseKeysChanged, { org_id: orgId });
  }

  private load(orgId: string): Promise<OrganizationKeys> {
    let loading = this.loading.get(orgId);
    if (!loading) {
      loading = this.read(orgId).finally(() => this.loading.delete(orgId));
      this.loading.set(orgId, loading);
    }
    return loading;
  }

  private async read(orgId: string): Promise<OrganizationKeys> {
    let rows = await this.find(orgId);
    if (!rows.some((row) => row.status === 'active')) {
      // Two gateways creating the first key at once: the partial unique index keeps one.
      await this.dataSource
        .createQueryBuilder()
        .insert()
        .into(ResponseKeyEntity)
        .values(this.newKey(orgId, 'active'))
        .orIgnore()
        .execute();
      rows = await this.find(orgId);
    }
    const active = rows.find((row) => row.status === 'active');
    if (!active) throw new Error(`the response key of organization ${orgId} is missing after its creation`);
    const keys: OrganizationKeys = {
      signer: {
        kid: active.id,
        privateKey: createPrivateKey(
          this.vault.open(active.id, {
            ciphertext: active.privateKeyCiphertext,
            version: active.masterKeyVersion,
          }),
        ),
      },
      jwks: rows.sort((a, b) => ORDER[a.status] - ORDER[b.status]).map(toJwk),
    };
    if (this.keys.size >= MAX_CACHED_ORGANIZATIONS) this.keys.delete(this.keys.keys().next().value as string);
    this.keys.set(orgId, keys);
    return keys;
  }

  private find(orgId: string): Promise<ResponseKeyEntity[]> {
    return this.dataSource
      .getRepository(ResponseKeyEntity)
      .createQueryBuilder('k')
      .addSelect(['k.privateKeyCiphertext', 'k.masterKeyVersion'])
      .where('k.org_id = :orgId', { orgId })
      .orderBy('k.created_at', 'DESC')
      .getMany();
  }

  private newKey(orgId: string, status: ResponseKeyStatus): ResponseKeyEntity {
    const id = randomUUID();
    const { publicKey, privateKey } = generateKeyPairSync('ed25519', {
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const sealed = this.vault.seal(id, privateKey);
    return Object.assign(new ResponseKeyEntity(), {
      id,
      orgId,
      publicKey,
      privateKeyCiphertext: sealed.ciphertext,
      masterKeyVersion: sealed.version,
      status,
      createdAt: new Date(),
    });
  }
}

function toJwk(row: ResponseKeyEntity): ResponseKeyJwk {
  const { x } = createPublicKey(row.publicKey).export({ format: 'jwk' });
  return { kty: 'OKP', crv: 'Ed25519', x: x!, kid: row.id, alg: 'EdDSA', use: 'sig', status: row.status };
}
