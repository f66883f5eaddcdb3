import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MasterKeyVault } from '@licensing/shared/crypto';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { ResponseKeyJwk } from './response-key.dto';
import { ResponseKeyEntity } from './response-key.entity';
import { AnswerSigner } from './signed-answer';

interface ResponseKey extends AnswerSigner {
  jwk: ResponseKeyJwk;
}

const MAX_CACHED_KEYS = 10_000;

/**
 * Organizations' response keys, created on first use. A key never changes once created, so the
 * parsed private KeyObject is cached for the life of the process: signing an answer costs no
 * query and no PEM parse. Concurrent first uses in one process share one load.
 */
@Injectable()
export class ResponseKeysService {
  private readonly vault: MasterKeyVault;
  private readonly keys = new Map<string, ResponseKey>();
  private readonly loading = new Map<string, Promise<ResponseKey>>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.vault = new MasterKeyVault(config.RESPONSE_MASTER_KEYS, 'RESPONSE_MASTER_KEYS');
  }

  /** The organization's key when this process holds it already: the hot path's only lookup. */
  cached(orgId: string): AnswerSigner | undefined {
    return this.keys.get(orgId);
  }

  async signer(orgId: string): Promise<AnswerSigner> {
    return this.keys.get(orgId) ?? this.load(orgId);
  }

  /** The organization's public response keys, as a JWK Set. */
  async jwks(orgId: string): Promise<{ keys: ResponseKeyJwk[] }> {
    const key = this.keys.get(orgId) ?? (await this.load(orgId));
    return { keys: [key.jwk] };
  }

  private load(orgId: string): Promise<ResponseKey> {
    let loading = this.loading.get(orgId);
    if (!loading) {
      loading = this.read(orgId).finally(() => this.loading.delete(orgId));
      this.loading.set(orgId, loading);
    }
    return loading;
  }

  private async read(orgId: string): Promise<ResponseKey> {
    const row = (await this.find(orgId)) ?? (await this.create(orgId));
    const privateKey = createPrivateKey(
      this.vault.open(row.id, { ciphertext: row.privateKeyCiphertext, version: row.masterKeyVersion }),
    );
    const { x } = createPublicKey(row.publicKey).export({ format: 'jwk' });
    const key: ResponseKey = {
      kid: row.id,
      privateKey,
      jwk: { kty: 'OKP', crv: 'Ed25519', x: x!, kid: row.id, alg: 'EdDSA', use: 'sig' },
    };
    if (this.keys.size >= MAX_CACHED_KEYS) this.keys.delete(this.keys.keys().next().value as string);
    this.keys.set(orgId, key);
    return key;
  }

  private find(orgId: string): Promise<ResponseKeyEntity | null> {
    return this.dataSource
      .getRepository(ResponseKeyEntity)
      .createQueryBuilder('k')
      .addSelect(['k.privateKeyCiphertext', 'k.masterKeyVersion'])
      .where('k.org_id = :orgId', { orgId })
      .getOne();
  }

  /** Two gateways creating the first key at once: the unique org_id keeps one, both then read it. */
  private async create(orgId: string): Promise<ResponseKeyEntity> {
    const id = randomUUID();
    const { publicKey, privateKey } = generateKeyPairSync('ed25519', {
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const sealed = this.vault.seal(id, privateKey);
    await this.dataSource
      .createQueryBuilder()
      .insert()
      .into(ResponseKeyEntity)
      .values({
        id,
        orgId,
        publicKey,
        privateKeyCiphertext: sealed.ciphertext,
        masterKeyVersion: sealed.version,
        createdAt: new Date(),
      })
      .orIgnore()
      .execute();
    const created = await this.find(orgId);
    if (!created) throw new Error(`the response key of organization ${orgId} is missing after its creation`);
    return created;
  }
}
