import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull, Not } from 'typeorm';
import {
  CreateProductDto,
  MessageView,
  PageQueryDto,
  ProductListView,
  ProductView,
  Messages,
  UpdateProductDto,
  pageOf,
} from '@licensing/contracts';
import { isUniqueViolation, pageWindow, preparedEntityQuery } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { auditChanges, recordAudit, recordEvent } from '@licensing/shared/events';
import { BusClient } from '@licensing/shared/messaging';
import { ProductEntity } from './product.entity';
import { applyProductChanges, isRefusal, newProduct } from './product-changes';
import { toCatalogProduct, toProductView } from './product.mapper';

/**
 * Products of an organization. No bus call is made inside a transaction: the key pair is checked
 * before one, the license service's catalog hears of a change after its commit (and, whatever
 * happens to that notice, from the change's event), and a deletion asks the license service's
 * consent first (docs/architecture.md, "The catalog").
 */
@Injectable()
export class ProductsService {
  private readonly logger = new Logger(ProductsService.name);

  /** One product by id, the hottest read. */
  private readonly findOne: (values: unknown[]) => Promise<ProductEntity[]>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: BusClient,
  ) {
    this.findOne = preparedEntityQuery(
      dataSource,
      ProductEntity,
      'product-get',
      'id = $1 AND org_id = $2 AND deleting_since IS NULL',
    );
  }

  async create(orgId: string, dto: CreateProductDto): Promise<ProductView> {
    if (dto.key_pair_id) await this.requireKeyPair(dto.key_pair_id);
    const product = newProduct(orgId, dto, randomUUID(), new Date());
    const now = product.createdAt;
    const view = toProductView(product);
    try {
      await this.dataSource.transaction(async (manager) => {
        await manager.insert(ProductEntity, product);
        await recordEvent(manager, { type: 'product.created', orgId, data: view, occurredAt: now });
        await recordAudit(manager, {
          orgId,
          action: 'created',
          resourceType: 'product',
          resourceId: product.id,
          changes: auditChanges(null, view),
          occurredAt: now,
        });
      });
    } catch (error) {
      if (isUniqueViolation(error, 'uq_products_org_code')) {
        throw DomainError.conflict(`A product with code "${dto.code}" already exists`);
      }
      throw error;
    }
    await this.notifyCatalog(product);
    return view;
  }

  async list(orgId: string, query: PageQueryDto): Promise<ProductListView> {
    const [products, total] = await this.dataSource.getRepository(ProductEntity).findAndCount({
      where: { orgId, deletingSince: IsNull() },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...pageWindow(pageOf(query)),
    });
    return { products: products.map(toProductView), total };
  }

  async get(orgId: string, id: string): Promise<ProductView> {
    const [product] = await this.findOne([id, orgId]);
    if (!product) throw DomainError.notFound('Product', id);
    return toProductView(product);
  }

  async update(orgId: string, id: string, changes: UpdateProductDto): Promise<ProductView> {
    if (changes.key_pair_id) await this.requireKeyPair(changes.key_pair_id);
    const product = await this.dataSource.transaction(async (manager) => {
      const product = await this.lock(manager, orgId, id);
      const before = toProductView(product);
      applyProductChanges(product, changes, new Date());
      await manager.save(product);
      const view = toProductView(product);
      await recordEvent(manager, {
        type: 'product.updated',
        orgId,
        data: view,
        occurredAt: product.updatedAt,
      });
      await recordAudit(manager, {
        orgId,
        action: 'updated',
        resourceType: 'product',
        resourceId: product.id,
        changes: auditChanges(before, view),
        occurredAt: product.updatedAt,
      });
      return product;
    });
    await this.notifyCatalog(product);
    return toProductView(product);
  }

  /**
   * Marks the product as being deleted (it disappears from every read), asks the license service's
   * consent (refused while the product has licenses; once given, no license can be created for it),
   * then deletes it. Refused: the product is restored. No answer: it stays marked, and asking again,
   * or `ProductDeletions` a minute later, finishes the deletion or restores the product.
   */
  async delete(orgId: string, id: string): Promise<MessageView> {
    const product = await this.dataSource.transaction(async (manager) => {
      const product = await manager.findOne(ProductEntity, {
        where: { id, orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!product) throw DomainError.notFound('Product', id);
      product.deletingSince ??= new Date();
      await manager.update(ProductEntity, { id }, { deletingSince: product.deletingSince });
      return product;
    });
    await this.finishDeletion(product);
    return { message: `Product ${id} deleted` };
  }

  /** Completes (or, if the license service refuses, undoes) a deletion that was started. */
  async finishDeletion(product: ProductEntity): Promise<void> {
    const { id, orgId } = product;
    try {
      await this.bus.send(Messages.catalog.retire, { id });
    } catch (error) {
      if (isRefusal(error)) {
        await this.dataSource.getRepository(ProductEntity).update({ id, orgId }, { deletingSince: null });
      }
      throw error;
    }
    await this.dataSource.transaction(async (manager) => {
      const { affected } = await manager.delete(ProductEntity, { id, orgId, deletingSince: Not(IsNull()) });
      if (!affected) return; // Finished by someone else meanwhile.
      const view = toProductView(product);
      await recordEvent(manager, { type: 'product.deleted', orgId, data: view });
      await recordAudit(manager, {
        orgId,
        action: 'deleted',
        resourceType: 'product',
        resourceId: id,
        changes: auditChanges(view, null),
      });
    });
  }

  /** Fails the request, before anything is written, if the organization has no such key pair. */
  private async requireKeyPair(keyPairId: string): Promise<void> {
    await this.bus.send(Messages.keyPair.get, { id: keyPairId });
  }

  /**
   * Tells the license service about a committed change at once, so that the next license is made
   * from it. If this notice is lost, the change's event brings the catalog up to date moments later.
   */
  private async notifyCatalog(product: ProductEntity): Promise<void> {
    try {
      await this.bus.send(Messages.catalog.upsert, toCatalogProduct(product));
    } catch (error) {
      this.logger.warn({
        msg: 'catalog not told; the product event will bring it',
        product_id: product.id,
        err: String(error),
      });
    }
  }

  private async lock(manager: EntityManager, orgId: string, id: string): Promise<ProductEntity> {
    const product = await manager.findOne(ProductEntity, {
      where: { id, orgId, deletingSince: IsNull() },
      lock: { mode: 'pessimistic_write' },
    });
    if (!product) throw DomainError.notFound('Product', id);
    return product;
  }
}
