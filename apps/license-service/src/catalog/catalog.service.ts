import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { CatalogProductDto, ProductPublicKeyView } from '@licensing/contracts';
import { preparedEntityQuery } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { KeyPairEntity } from '../key-pairs/key-pair.entity';
import { LicenseEntity } from '../licenses/license.entity';
import { CatalogProductEntity } from './catalog-product.entity';

const MAX_HELD_PRODUCTS = 10_000;

/**
 * The products as the license service knows them (docs/architecture.md, "The catalog"). A version
 * is applied only if it is newer than the one held, and never to a retired product: retiring is
 * final, and the license service decides it (refused while the product has licenses). License
 * creation locks the row it reads (FOR SHARE) and retiring locks it for update, which is what keeps
 * a license from being created for a deleted product when the two race.
 */
@Injectable()
export class CatalogService {
  /**
   * Live products with a key pair, as last read, by id: what licenses are made from. Never trusted
   * alone: the statement that creates a license checks, under the row's share lock, that the
   * version it was made from is still the live one (LicensesService).
   */
  private readonly issuable = new Map<string, CatalogProductEntity>();
  private readonly liveProduct: (values: unknown[]) => Promise<CatalogProductEntity[]>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.liveProduct = preparedEntityQuery(
      dataSource,
      CatalogProductEntity,
      'catalog-live-product',
      'id = $1 AND org_id = $2 AND retired_at IS NULL',
    );
  }

  /** Applies a version of the product; an older one than held, or one of a retired product, is ignored. */
  async upsert(orgId: string, product: CatalogProductDto): Promise<{ ok: true }> {
    await this.dataSource.transaction(async (manager) => {
      if (product.key_pair_id) await this.lockKeyPair(manager, orgId, product.key_pair_id);
      const table = manager.getRepository(CatalogProductEntity).metadata.tablePath;
      await manager.query(
        `INSERT INTO ${table} AS c
           (id, org_id, code, name, key_pair_id, default_features, default_valid_days,
            max_concurrent_activations, activation_heartbeat_interval, retired_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $10)
         ON CONFLICT (id) DO UPDATE SET
           name = EXCLUDED.name, key_pair_id = EXCLUDED.key_pair_id,
           default_features = EXCLUDED.default_features, default_valid_days = EXCLUDED.default_valid_days,
           max_concurrent_activations = EXCLUDED.max_concurrent_activations,
           activation_heartbeat_interval = EXCLUDED.activation_heartbeat_interval,
           updated_at = EXCLUDED.updated_at
         WHERE c.org_id = EXCLUDED.org_id AND c.retired_at IS NULL AND c.updated_at < EXCLUDED.updated_at`,
        [
          product.id,
          orgId,
          product.code,
          product.name,
          product.key_pair_id,
          product.default_features,
          product.default_valid_days,
          product.max_concurrent_activations,
          product.activation_heartbeat_interval,
          product.updated_at,
        ],
      );
    });
    this.issuable.delete(product.id);
    return { ok: true };
  }

  /**
   * Consents to the product's deletion: refused while any license exists; once given, no license
   * can be created for it again. Asking again is harmless: the product service repeats the
   * question until it has an answer. A product the catalog has not heard of yet (its event still
   * on the way) is recorded as retired, so that the late event cannot bring it back.
   */
  async retire(orgId: string, productId: string): Promise<{ ok: true }> {
    await this.dataSource.transaction(async (manager) => {
      const product = await manager.findOne(CatalogProductEntity, {
        where: { id: productId, orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (product?.retiredAt) return;
      if (!product) {
        await manager
          .createQueryBuilder()
          .insert()
          .into(CatalogProductEntity)
          .values(retiredUnknown(orgId, productId))
          .orIgnore()
          .execute();
        return;
      }
      if (await manager.existsBy(LicenseEntity, { productId })) {
        throw DomainError.conflict(`Product ${productId} has licenses and cannot be deleted`);
      }
      await manager.update(
        CatalogProductEntity,
        { id: productId },
        { retiredAt: new Date(), keyPairId: null },
      );
    });
    this.issuable.delete(productId);
    return { ok: true };
  }

  async publicKey(orgId: string, productId: string): Promise<ProductPublicKeyView> {
    const product = await this.findLive(this.dataSource.manager, orgId, productId);
    if (!product.keyPairId) {
      throw new DomainError('key_pair_missing', `Product ${productId} has no key pair assigned`);
    }
    const keyPair = await this.dataSource
      .getRepository(KeyPairEntity)
      .findOneByOrFail({ id: product.keyPairId });
    return {
      product_id: product.id,
      product_name: product.name,
      product_code: product.code,
      public_key: keyPair.publicKey,
      algorithm: keyPair.algorithm,
      key_pair_id: keyPair.id,
    };
  }

  /** A product of the organization that has not been deleted. */
  async findLive(manager: EntityManager, orgId: string, productId: string): Promise<CatalogProductEntity> {
    const product = await manager.findOne(CatalogProductEntity, {
      where: { id: productId, orgId, retiredAt: IsNull() },
    });
    if (!product) throw DomainError.notFound('Product', productId);
    return product;
  }

  /**
   * The product a license is to be made from, unlocked: the version held in memory, or (`fresh`, or
   * none held) the live row read now. Only a fresh read answers `not_found` or `key_pair_missing`;
   * the caller's statement proves the version still live when it inserts the license.
   */
  async forIssue(orgId: string, productId: string, fresh: boolean): Promise<CatalogProductEntity> {
    const held = fresh ? undefined : this.issuable.get(productId);
    if (held?.orgId === orgId) return held;
    const [product] = await this.liveProduct([productId, orgId]);
    if (!product) {
      this.issuable.delete(productId);
      throw DomainError.notFound('Product', productId);
    }
    if (!product.keyPairId) {
      this.issuable.delete(productId);
      throw new DomainError('key_pair_missing', `Product ${product.id} has no key pair assigned`);
    }
    if (this.issuable.size >= MAX_HELD_PRODUCTS) this.issuable.delete(this.issuable.keys().next().value!);
    this.issuable.set(productId, product);
    return product;
  }

  private async lockKeyPair(manager: EntityManager, orgId: string, keyPairId: string): Promise<void> {
    const found = await manager.findOne(KeyPairEntity, {
      where: { id: keyPairId, orgId },
      lock: { mode: 'pessimistic_read' },
    });
    if (!found) throw DomainError.notFound('Key pair', keyPairId);
  }
}

/** The row of a product retired before the catalog learnt anything else about it. */
function retiredUnknown(orgId: string, id: string): CatalogProductEntity {
  const now = new Date();
  return Object.assign(new CatalogProductEntity(), {
    id,
    orgId,
    code: '',
    name: '',
    keyPairId: null,
    defaultFeatures: [],
    defaultValidDays: 0,
    maxConcurrentActivations: null,
    activationHeartbeatInterval: null,
    retiredAt: now,
    updatedAt: now,
  });
}
