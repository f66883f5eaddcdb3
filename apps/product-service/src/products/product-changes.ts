import { CreateProductDto, UpdateProductDto } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { ProductEntity } from './product.entity';

/** The rules of a product's creation, change and deletion. No I/O: ProductsService applies them. */

/** A new product's licenses last a year unless the request says otherwise. */
const DEFAULT_VALID_DAYS = 365;

/** A new product: what the request leaves out gets its default. */
export function newProduct(orgId: string, dto: CreateProductDto, id: string, now: Date): ProductEntity {
  return Object.assign(new ProductEntity(), {
    id,
    orgId,
    name: dto.name,
    code: dto.code,
    description: dto.description ?? '',
    defaultFeatures: dto.default_features ?? [],
    defaultValidDays: dto.default_valid_days ?? DEFAULT_VALID_DAYS,
    keyPairId: dto.key_pair_id ?? null,
    maxConcurrentActivations: dto.max_concurrent_activations ?? null,
    activationHeartbeatInterval: dto.activation_heartbeat_interval ?? null,
    createdAt: now,
    updatedAt: now,
    deletingSince: null,
  });
}

/**
 * Applies a PATCH in memory. A field left out stays as it is; null clears a field where null
 * means "none". The code never changes: it is part of every license's serial.
 */
export function applyProductChanges(product: ProductEntity, changes: UpdateProductDto, now: Date): void {
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
  product.updatedAt = nextVersion(product.updatedAt, now);
}

/**
 * The time of a change: later than the version before, even within one millisecond or with a
 * clock that stepped back. The license service's catalog keeps the newest version it hears of.
 */
export function nextVersion(previous: Date, now: Date): Date {
  return new Date(Math.max(now.getTime(), previous.getTime() + 1));
}

/**
 * Whether the license service refused to retire the product (it has licenses). A refusal settles
 * the deletion: the product is restored. Anything else (no answer, a 5xx) leaves it to retry.
 */
export function isRefusal(error: unknown): error is DomainError {
  return error instanceof DomainError && error.status < 500;
}
