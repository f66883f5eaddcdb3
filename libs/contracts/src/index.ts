/** Every message between the gateway and the services: definitions (subject, request, reply), request DTOs validated on both edges, replies, events and streams. */
export * from './messages';
export * from './common/validation';
export * from './common/pagination.dto';
export * from './common/common.dto';
export * from './products/product.dto';
export * from './licenses/license.dto';
export * from './key-pairs/key-pair.dto';
export * from './catalog/catalog.dto';
export * from './licenses/license-status';
export * from './events/events';
export * from './revocation/revocation.dto';
export * from './revocation/serial-status.dto';
export * from './revocation/serial-status-put.dto';
export * from './analytics/analytics.dto';
export * from './activations/activation.dto';
export * from './activations/components.validator';
export * from './audit/audit.dto';
