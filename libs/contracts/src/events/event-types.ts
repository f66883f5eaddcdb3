/**
 * Every state change is published once on JetStream as a LicensingEvent, on
 * `licensing.events.<org_id>.<type>` (docs/events.md). Types are past-tense facts.
 */
export const EVENT_TYPES = [
  'product.created',
  'product.updated',
  'product.deleted',
  'license.created',
  'license.updated',
  'license.suspended',
  'license.reinstated',
  'license.expired',
  'license.revoked',
  'license.usage_incremented',
  'license.usage_reset',
  'license.checked_in',
  'activation.created',
  'activation.deleted',
  'activation.expired',
  'key_pair.created',
  'key_pair.deleted',
  'entitlement.created',
  'entitlement.updated',
  'entitlement.deleted',
  'policy.created',
  'policy.updated',
  'policy.deleted',
  'webhook.disabled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
