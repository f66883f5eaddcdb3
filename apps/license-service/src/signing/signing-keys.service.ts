import { KeyObject } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { parsePrivateKey, parsePublicKey } from '@licensing/license-format';
import { KeyPairEntity } from '../key-pairs/key-pair.entity';
import { MasterKeyVault } from '@licensing/shared/crypto';

interface CachedKey {
  orgId: string;
  publicKey: KeyObject;
  privateKey?: KeyObject;
}

const MAX_CACHED_KEYS = 10_000;

/**
 * Parsed key material by key pair id. Key pairs never change once created, so a parsed KeyObject
 * is cached for the life of the process (parsing a PEM costs as much as a verification) and only
 * dropped when the key pair is deleted.
 */
@Injectable()
export class SigningKeysService {
  private readonly cache = new Map<string, CachedKey>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly vault: MasterKeyVault,
  ) {}

  /** The public key of one of the organization's key pairs, or undefined when it has none by that id. */
  async publicKey(orgId: string, keyPairId: string): Promise<KeyObject | undefined> {
    const cached = this.cache.get(keyPairId) ?? (await this.load(keyPairId, false));
    return cached?.orgId === orgId ? cached.publicKey : undefined;
  }

  /**
   * Inside a transaction pass its manager: loading on a second pooled connection while the first is
   * held would exhaust the pool under concurrent license creation.
   */
  async privateKey(
    orgId: string,
    keyPairId: string,
    manager?: EntityManager,
  ): Promise<KeyObject | undefined> {
    let cached = this.cache.get(keyPairId);
    if (!cached?.privateKey) cached = await this.load(keyPairId, true, manager);
    return cached?.orgId === orgId ? cached.privateKey : undefined;
  }

  forget(keyPairId: string): void {
    this.cache.delete(keyPairId);
  }

  private async load(
    keyPairId: string,
    withPrivate: boolean,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<CachedKey | undefined> {
    const query = manager.getRepository(KeyPairEntity).createQueryBuilder('k').where('k.id = :keyPairId', {
      keyPairId,
    });
    if (withPrivate) query.addSelect(['k.privateKeyCiphertext', 'k.masterKeyVersion']);
    const row = await query.getOne();
    if (!row) return undefined;
    const entry: CachedKey = { orgId: row.orgId, publicKey: parsePublicKey(row.publicKey) };
    if (withPrivate) {
      entry.privateKey = parsePrivateKey(
        this.vault.open(row.id, { ciphertext: row.privateKeyCiphertext, version: row.masterKeyVersion }),
      );
    }
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(keyPairId, entry);
    return entry;
  }
}
