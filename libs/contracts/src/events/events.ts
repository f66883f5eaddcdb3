import type { ActivationView } from '../activations/activation.dto';
import type { EntitlementView } from '../entitlements/entitlement.dto';
import type { KeyPairView } from '../key-pairs/key-pair.dto';
import type { LicenseView } from '../licenses/license.dto';
import type { PolicyView } from '../policies/policy.dto';
import type { ProductView } from '../products/product.dto';
import type { SerialStatus } from '../revocation/revocation.dto';
import type { WebhookView } from '../webhooks/webhook.dto';

import type { EventType } from './event-types';

export { EVENT_TYPES } from './event-types';
export type { EventType } from './event-types';

/** The `data` of `license.usage_incremented`: the license, `uses` being the new total. */
export type LicenseUsageIncrementedData = LicenseView & { increment: number };

/** Fails to compile unless every event type has a payload. */
type EveryEventType<Payloads extends Record<EventType, unknown>> = Payloads;

/** The `data` of each event type: the resource as the API returns it (docs/events.md). */
export type EventPayloads = EveryEventType<{
  'product.created': ProductView;
  'product.updated': ProductView;
  'product.deleted': ProductView;
  'license.created': LicenseView;
  'license.updated': LicenseView;
  'license.suspended': LicenseView;
  'license.reinstated': LicenseView;
  'license.expired': LicenseView;
  'license.revoked': LicenseView;
  'license.usage_incremented': LicenseUsageIncrementedData;
  'license.usage_reset': LicenseView;
  'license.checked_in': LicenseView;
  'activation.created': ActivationView;
  'activation.deleted': ActivationView;
  'activation.expired': ActivationView;
  'key_pair.created': KeyPairView;
  'key_pair.deleted': KeyPairView;
  'entitlement.created': EntitlementView;
  'entitlement.updated': EntitlementView;
  'entitlement.deleted': EntitlementView;
  'policy.created': PolicyView;
  'policy.updated': PolicyView;
  'policy.deleted': PolicyView;
  'webhook.disabled': WebhookView;
}>;

/** The `license.*` event types: each carries the license's serial status. */
export type LicenseEventType = Extract<EventType, `license.${string}`>;

/**
 * The version of the event payloads published today. A breaking change of a payload is published
 * as a new version beside the old one for a deprecation period, never in place; consumers read the
 * versions they know.
 */
export const EVENT_SCHEMA_VERSION = 1;

export interface LicensingEvent<T = unknown> {
  /** Unique per event; also the JetStream message id, so a re-published event is dropped as a duplicate. */
  id: string;
  /** The payload's version (EVENT_SCHEMA_VERSION when it was published). */
  schema_version: number;
  type: EventType;
  org_id: string;
  occurred_at: string;
  /** The resource as the API returns it (a license without license_blob). */
  data: T;
  /**
   * `license.*` events only: the license's status as the revocation cache stores it, built by the
   * license service (its one producer, which also writes it through on revoke and PATCH) and
   * stored as is by the revocation service.
   */
  serial_status?: SerialStatus;
}

/** JetStream streams. Names and subjects are placed under the bus namespace when there is one. */
export const Streams = {
  events: { name: 'LICENSING_EVENTS', subjects: 'licensing.events.>' },
  syncReports: { name: 'SYNC_REPORTS', subjects: 'licensing.sync-reports.>' },
  /**
   * Messages a consumer could not process for their own content (not for an outage), set aside
   * under `licensing.dead-letters.<durable>` so that they neither block their stream nor vanish.
   * Kept longer than the streams they come from: an operator has a month to look.
   */
  deadLetters: { name: 'DEAD_LETTERS', subjects: 'licensing.dead-letters.>', maxAgeDays: 30 },
  /** Audit entries of the services' changes, on `licensing.audit.<org_id>`; stored by the gateway. */
  audit: { name: 'AUDIT_EVENTS', subjects: 'licensing.audit.>' },
} as const;

export function deadLetterSubject(durable: string): string {
  return `licensing.dead-letters.${durable}`;
}

/** What every event subject starts with, after the bus namespace when there is one. */
const EVENTS_PREFIX = 'licensing.events.';

export function eventSubject(orgId: string, type: EventType): string {
  return `${EVENTS_PREFIX}${orgId}.${type}`;
}

/** A token NATS can publish: not empty, no wildcard, no whitespace (and no dot, which splits tokens). */
const SUBJECT_TOKEN = /^[^\s.*>]+$/;

/**
 * The organization and type an event subject names: `[<namespace>.]licensing.events.<org_id>.<type>`,
 * the inverse of `eventSubject()` under `namespaced()`. Undefined for any other subject: another
 * namespace, another stream, an empty or wildcard token. The type is not checked against
 * EVENT_TYPES, so that consumers can carry types added after them.
 */
export function parseEventSubject(
  subject: string,
  namespace: string,
): { orgId: string; type: string } | undefined {
  const prefix = namespace ? `${namespace}.${EVENTS_PREFIX}` : EVENTS_PREFIX;
  if (!subject.startsWith(prefix)) return undefined;
  const [orgId, ...type] = subject.slice(prefix.length).split('.');
  if (type.length === 0 || ![orgId, ...type].every((token) => SUBJECT_TOKEN.test(token))) return undefined;
  return { orgId, type: type.join('.') };
}

/** Every license event of one organization, or of every organization with `*`: a consumer's filter. */
export function licenseEventsFilter(orgId: string): string {
  return `${EVENTS_PREFIX}${orgId}.license.>`;
}

/** Every license event of every organization: the filter of a consumer that mirrors license state. */
export const LICENSE_EVENTS_FILTER = licenseEventsFilter('*');

/** Every accepted usage increment of every organization: the filter of the analytics service's count. */
export const USAGE_INCREMENTED_FILTER = 'licensing.events.*.license.usage_incremented';

/** Every product event of every organization: the filter of the license service's catalog. */
export const PRODUCT_EVENTS_FILTER = 'licensing.events.*.product.>';

export function syncReportSubject(orgId: string): string {
  return `licensing.sync-reports.${orgId}`;
}
