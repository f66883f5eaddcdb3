import { CatalogProductDto, ProductView } from '@licensing/contracts';
import { ProductEntity } from './product.entity';

export function toProductView(product: ProductEntity): ProductView {
  return {
    id: product.id,
    name: product.name,
    code: product.code,
    description: product.description,
    default_features: product.defaultFeatures,
    default_valid_days: product.defaultValidDays,
    key_pair_id: product.keyPairId,
    max_concurrent_activations: product.maxConcurrentActivations,
    activation_heartbeat_interval: product.activationHeartbeatInterval,
    created_at: product.createdAt.toISOString(),
    updated_at: product.updatedAt.toISOString(),
  };
}

export function toCatalogProduct(product: ProductEntity): CatalogProductDto {
  return {
    id: product.id,
    code: product.code,
    name: product.name,
    key_pair_id: product.keyPairId,
    default_features: product.defaultFeatures,
    default_valid_days: product.defaultValidDays,
    max_concurrent_activations: product.maxConcurrentActivations,
    activation_heartbeat_interval: product.activationHeartbeatInterval,
    updated_at: product.updatedAt.toISOString(),
  };
}
