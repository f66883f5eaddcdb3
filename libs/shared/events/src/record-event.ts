import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import {
  EVENT_SCHEMA_VERSION,
  EventType,
  LicensingEvent,
  SerialStatus,
  eventSubject,
} from '@licensing/contracts';
import { OutboxRow, writeOutbox } from './outbox-signal';

export interface EventInput<T> {
  type: EventType;
  orgId: string;
  data: T;
  /** Defaults to now; pass the change's own timestamp when there is one. */
  occurredAt?: Date;
  serialStatus?: SerialStatus;
}

/**
 * Records an event inside the caller's transaction; the outbox relay publishes it after commit.
 * `occurredAt` defaults to now; pass the change's own timestamp when there is one.
 */
export async function recordEvent<T>(
  manager: EntityManager,
  event: EventInput<T>,
): Promise<LicensingEvent<T>> {
  const { published, row } = eventRow(event);
  await writeOutbox(manager, row);
  return published;
}

/**
 * The event and its outbox row, for a writer that inserts the row in a statement of its own
 * (with `outboxTraceContext()` and the outbox's `pg_notify`, in the change's transaction).
 */
export function eventRow<T>(event: EventInput<T>): { published: LicensingEvent<T>; row: OutboxRow } {
  const published: LicensingEvent<T> = {
    id: randomUUID(),
    schema_version: EVENT_SCHEMA_VERSION,
    type: event.type,
    org_id: event.orgId,
    occurred_at: (event.occurredAt ?? new Date()).toISOString(),
    data: event.data,
    ...(event.serialStatus ? { serial_status: event.serialStatus } : {}),
  };
  return {
    published,
    row: {
      id: published.id,
      subject: eventSubject(event.orgId, event.type),
      payload: JSON.stringify(published),
    },
  };
}
