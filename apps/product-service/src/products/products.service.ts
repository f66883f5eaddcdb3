import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
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
import { isUniqueViolation, pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { auditChanges, recordAudit, recordEvent } from '@licensing/shared/events';
import { BusClient } from '@licensing/shared/messaging';
import { ProductEntity } from './product.entity';
import { toCatalogProduct, toProductView } from './product.mapper';

/**
 * Products of an organization. Every change is mirrored into the license service's catalog inside
 * the same transaction: if the license service refuses (an unknown key pair, a product that still
 * has licenses) the change rolls back here too, and so does its event.
 */
@Injectable()
export class ProductsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: BusClient,
  ) {}

  async create(orgId: string, dto: CreateProductDto): Promise<ProductView> {
    const now = new Date();
    const product = Object.assign(new ProductEntity(), {
      id: randomUUID(),
      orgId,
      name: dto.name,
      code: dto.code,
      description: dto.description ?? '',
      defaultFeatures: dto.default_features ?? [],
      defaultValidDays: dto.default_valid_days ?? 365,
      keyPairId: dto.key_pair_id ?? null,
      maxConcurrentActivations: dto.max_concurrent_activations ?? null,
      activationHeartbeatInterval: dto.activation_heartbeat_interval ?? null,
      createdAt: now,
      updatedAt: now,
    });
    try {
      await this.dataSource.transaction(async (manager) => {
        await manager.insert(ProductEntity, product);
        const view = toProductView(product);
        await recordEvent(manager, { type: 'product.created', orgId, data: view, occurredAt: now });
        await recordAudit(manager, {
          orgId,
          action: 'created',
          resourceType: 'product',
          resourceId: product.id,
          changes: auditChanges(null, view),
          occurredAt: now,
        });
        await this.bus.send(Messages.catalog.upsert, toCatalogProduct(product));
      });
    } catch (error) {
      if (isUniqueViolation(error, 'uq_products_org_code')) {
        throw DomainError.conflict(`A product with code "${dto.code}" already exists`);
      }
      throw error;
    }
    return toProductView(product);
  }

  async list(orgId: string, query: PageQueryDto): Promise<ProductListView> {
    const [products, total] = await this.dataSource.getRepository(ProductEntity).findAndCount({
      where: { orgId },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...pageWindow(pageOf(query)),
    });
    return { products: products.map(toProductView), total };
  }

  async get(orgId: string, id: string): Promise<ProductView> {
    const product = await this.dataSource.getRepository(ProductEntity).findOneBy({ id, orgId });
    if (!product) throw DomainError.notFound('Product', id);
    return toProductView(product);
  }

  async update(orgId: string, id: string, changes: UpdateProductDto): Promise<ProductView> {
    return this.dataSource.transaction(async (manager) => {
      const product = await this.lock(manager, orgId, id);
      const before = toProductView(product);
      if (changes.name !== undefined) product.name = changes.name;
      if (changes.description !== undefined) product.description = changes.description;
      if (changes.default_features !== undefined) product.defaultFeatures = changes.default_features;
      if (changes.default_valid_days !== undefined) product.defaultValidDays = changes.default_valid_days;
      if (changes.key_pair_id !== undefined) product.keyPairId = changes.key_pair_id;
      if (changes.max_concurrent_activations !== undefined) {
        product.maxConcurrentActivations = changes.max_concurrent_activations;
      }
      if (changes.activation_heartbeat_interval !== undefined) {
        product.activationHeartbeatInterval = changes.activation_heartbeat_interval;
      }
      product.updatedAt = new Date();
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
      await this.bus.send(Messages.catalog.upsert, toCatalogProduct(product));
      return view;
    });
  }

  /**
   * The license service retires the product first: it refuses while any license exists and, once it
   * has agreed, no license can be created for the product, even by a create already in flight.
   */
  async delete(orgId: string, id: string): Promise<MessageView> {
    await this.dataSource.transaction(async (manager) => {
      const product = await this.lock(manager, orgId, id);
      await this.bus.send(Messages.catalog.retire, { id: product.id });
      await manager.delete(ProductEntity, { id: product.id, orgId });
      const view = toProductView(product);
      await recordEvent(manager, { type: 'product.deleted', orgId, data: view });
      await recordAudit(manager, {
        orgId,
        action: 'deleted',
        resourceType: 'product',
        resourceId: product.id,
        changes: auditChanges(view, null),
      });
    });
    return { message: `Product ${id} deleted` };
  }

  private async lock(manager: EntityManager, orgId: string, id: string): Promise<ProductEntity> {
    const product = await manager.findOne(ProductEntity, {
      where: { id, orgId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!product) throw DomainError.notFound('Product', id);
    return product;
  }
}
