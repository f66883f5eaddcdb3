// The API's answers, as far as the console reads them (the OpenAPI document has them all).

export type Scope = 'admin' | 'read' | 'client';
export type LicenseStatus = 'active' | 'suspended' | 'revoked' | 'expired';
export const LICENSE_STATUSES: LicenseStatus[] = ['active', 'suspended', 'revoked', 'expired'];
export const LICENSE_TYPES = ['subscription', 'perpetual', 'trial', 'node_locked', 'floating'] as const;
export const KEY_ALGORITHMS = ['ed25519', 'ecdsa-p256', 'rsa-3072'] as const;
export const OVERAGE_RULES = ['none', '1.25x', '1.5x', '2x', 'always'] as const;
export const MACHINE_MATCHING_RULES = ['any', 'two', 'most', 'all'] as const;

export interface CurrentKey {
  id: string;
  name: string;
  scopes: Scope[];
  prefix: string;
  org_id: string;
  org_name: string;
}

export interface KeyPair {
  id: string;
  name: string;
  algorithm: string;
  public_key: string;
  fingerprint: string;
  created_at: string;
}

export interface Product {
  id: string;
  name: string;
  code: string;
  description: string;
  default_features: string[];
  default_valid_days: number;
  key_pair_id: string | null;
  created_at: string;
}

export interface Policy {
  id: string;
  product_id: string;
  name: string;
  license_type: string;
  duration_days: number | null;
  max_machines: number;
  max_processes: number | null;
  heartbeat_interval_seconds: number | null;
  heartbeat_grace_seconds: number;
  check_in_interval_days: number | null;
  overage: string;
  machine_matching: string;
  created_at: string;
}

export interface License {
  id: string;
  product_id: string;
  product_name: string;
  serial: string;
  license_type: string;
  customer_id: string | null;
  customer_email: string | null;
  status: LicenseStatus;
  valid_from: string;
  valid_until: string | null;
  features: string[];
  max_seats: number;
  entitlements: string[];
  uses: number;
  max_uses: number | null;
  created_at: string;
  revoked_at: string | null;
  policy_id: string | null;
  last_check_in_at: string | null;
}

export interface Entitlement {
  id: string;
  code: string;
  name: string;
  created_at: string;
}

export interface Activation {
  id: string;
  fingerprint: string;
  hostname: string | null;
  platform: string | null;
  created_at: string;
  last_heartbeat_at: string;
}

export interface LicenseUsage {
  last_sync_at: string | null;
  syncs: number;
  peak_seats_in_use: number | null;
  versions: string[];
  fingerprints: { fingerprint: string; last_sync_at: string }[];
  total: number;
  daily: { day: string; syncs: number; machines: number }[];
  increments: number;
  uses_counted: number;
  last_increment_at: string | null;
}

export interface AuditEvent {
  id: string;
  occurred_at: string;
  action: string;
  actor: { prefix: string; name: string };
  changes: Record<string, { from: unknown; to: unknown }>;
}

export interface ApiKey {
  id: string;
  name: string;
  scopes: Scope[];
  prefix: string;
  created_at: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
}

export interface Delivery {
  id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface LicenseToken {
  id: string;
  license_id: string;
  name: string | null;
  prefix: string;
  expires_at: string | null;
  created_at: string;
}

export interface Organization {
  id: string;
  name: string;
  client_keys_license_actions: boolean;
  checkout_ttl_seconds: number;
  created_at: string;
}
