import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import {
  EVENT_SCHEMA_VERSION,
  EventPayloads,
  EventType,
  LicenseEventType,
  LicensingEvent,
  SerialStatus,
  eventSubject,
} from '@licensing/contracts';
import { OutboxRow, writeOutbox } from './outbox-signal';

/**
 * An event to record: its `data` is its type's payload, and a `license.*` event carries the
 * license's serial status, which the revocation service stores as is.
 */
export type EventInput<T extends EventType = EventType> = {
  [Type in T]: {
    type: Type;
    orgId: string;
    data: EventPayloads[Type];
    /** Defaults to now; pass the change's own timestamp when there is one. */
    occurredAt?: Date;
  } & (Type extends LicenseEventType ? { serialStatus: SerialStatus } : { serialStatus?: never });
}[T];

/**
 * Records an event inside the caller's transaction; the outbox relay publishes it after commit.
 * `occurredAt` defaults to now; pass the change's own timestamp when there is one.
 */
export async function recordEvent<T extends EventType>(
  manager: EntityManager,
  event: EventInput<T>,
): Promise<LicensingEvent<EventPayloads[T]>> {
  const { published, row } = eventRow(event);
  await writeOutbox(manager, row);
  return published;
}

/**
 * The event and its outbox row, for a writer that inserts the row in a statement of its own
 * (with `outboxTraceContext()` and the outbox's `pg_notify`, in the change's transaction).
 */
export function eventRow<T extends EventType>(
  event: EventInput<T>,
): { published: LicensingEvent<EventPayloads[T]>; row: OutboxRow } {
  const published: LicensingEvent<EventPayloads[T]> = {
    id: randomUUID(),
    schema_version: EVENT_SCHEMA_VERSION,
    type: event.type,
    org_id: event.orgId,
    occurred_at: (event.occurredAt ?? new Date()).toISOString(),
    data: event.data,
    ...(event.serialStatus ? { serial_status: event.serialStatus } : {}),
  };
  return { published, row: eventMessage(published) };
}

/** An event as the outbox stores it and the relay publishes it: the same bytes and message id. */
export function eventMessage(published: LicensingEvent): OutboxRow {
  return {
    id: published.id,
    subject: eventSubject(published.org_id, published.type as EventType),
    payload: JSON.stringify(published),
  };
}
