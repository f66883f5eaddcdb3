import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import {
  EVENT_SCHEMA_VERSION,
  EventType,
  LicensingEvent,
  SerialStatus,
  eventSubject,
} from '@licensing/contracts';
import { writeOutbox } from './outbox-signal';

/**
 * Records an event inside the caller's transaction; the outbox relay publishes it after commit.
 * `occurredAt` defaults to now; pass the change's own timestamp when there is one.
 */
export async function recordEvent<T>(
  manager: EntityManager,
  event: { type: EventType; orgId: string; data: T; occurredAt?: Date; serialStatus?: SerialStatus },
): Promise<LicensingEvent<T>> {
  const published: LicensingEvent<T> = {
    id: randomUUID(),
    schema_version: EVENT_SCHEMA_VERSION,
    type: event.type,
    org_id: event.orgId,
    occurred_at: (event.occurredAt ?? new Date()).toISOString(),
    data: event.data,
    ...(event.serialStatus ? { serial_status: event.serialStatus } : {}),
  };
  await writeOutbox(manager, {
    id: published.id,
    subject: eventSubject(event.orgId, event.type),
    payload: JSON.stringify(published),
  });
  return published;
}
