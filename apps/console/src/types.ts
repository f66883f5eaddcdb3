// The API's answers, as the console reads them. Each is the OpenAPI document's own schema
// (api-types.d.ts, generated from it): a change of the API breaks the console's type check.
import type { components } from './api-types';

type Schemas = components['schemas'];

export type CurrentKey = Schemas['CurrentApiKeyView'];
export type KeyPair = Schemas['KeyPairView'];
export type Product = Schemas['ProductView'];
export type Policy = Schemas['PolicyView'];
export type License = Schemas['LicenseView'];
export type Entitlement = Schemas['EntitlementView'];
export type Activation = Schemas['ActivationView'];
export type LicenseUsage = Schemas['LicenseUsageView'];
export type AuditEvent = Schemas['AuditEventView'];
export type ApiKey = Schemas['ApiKeyView'];
export type Webhook = Schemas['WebhookView'];
export type Delivery = Schemas['DeliveryView'];
export type DeliveryDetail = Schemas['DeliveryDetailView'];
export type WebhookSecret = Schemas['WebhookSecretView'];
export type LicenseToken = Schemas['LicenseTokenView'];
export type Organization = Schemas['OrganizationView'];
export type RelayFile = Schemas['RelayFileView'];
export type RelayFileCreated = Schemas['RelayFileCreatedView'];
export type NewRelayFile = Schemas['CreateRelayFileDto'];

export type Scope = ApiKey['scopes'][number];
export type LicenseStatus = License['status'];

// The choices the console's forms offer. `satisfies` keeps each to values the API accepts.
export const LICENSE_STATUSES = [
  'active',
  'suspended',
  'revoked',
  'expired',
] as const satisfies LicenseStatus[];
export const LICENSE_TYPES = [
  'subscription',
  'perpetual',
  'trial',
  'node_locked',
  'floating',
] as const satisfies Policy['license_type'][];
export const KEY_ALGORITHMS = ['ed25519', 'ecdsa-p256', 'rsa-3072'] as const satisfies KeyPair['algorithm'][];
export const OVERAGE_RULES = ['none', '1.25x', '1.5x', '2x', 'always'] as const satisfies Policy['overage'][];
export const MACHINE_MATCHING_RULES = [
  'any',
  'two',
  'most',
  'all',
] as const satisfies Policy['machine_matching'][];
