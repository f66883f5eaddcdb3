import { EntityManager } from 'typeorm';
import { activeTraceCarrier, tracing } from '@licensing/shared/tracing';
import { OutboxEventEntity } from './outbox-event.entity';

/** The PostgreSQL notification channel of a schema's outbox: its relay listens on it. */
export function outboxChannel(schema: string | undefined): string {
  return `outbox_${schema ?? 'public'}`;
}

/** An outbox row as it is written: the message's id (its `Nats-Msg-Id`), subject and serialized payload. */
export interface OutboxRow {
  id: string;
  subject: string;
  payload: string;
}

/**
 * Writes one row to the writer's outbox and tells the outbox relays of the writer's schema that it
 * is waiting, in one statement (one round trip; an insert and a separate `pg_notify` took two).
 * Called inside the writing transaction: PostgreSQL delivers a notification at commit and only
 * then (never for a rollback), and several in one transaction as one. Traced, the row keeps the
 * active trace context, so the relay's publication joins the request's trace.
 */
export async function writeOutbox(manager: EntityManager, row: OutboxRow): Promise<void> {
  const schema = (manager.connection.options as { schema?: string }).schema;
  const table = manager.connection.getMetadata(OutboxEventEntity).tablePath;
  await manager.query(
    `WITH written AS (
       INSERT INTO ${table} (id, subject, payload, trace_context, created_at) VALUES ($1, $2, $3, $5, now()) RETURNING 1
     )
     SELECT pg_notify($4, '') FROM written`,
    [row.id, row.subject, row.payload, outboxChannel(schema), outboxTraceContext()],
  );
}

/**
 * The `trace_context` column of an outbox row written now: the active trace (`{"traceparent": …}`)
 * when tracing is on and a span is active, else null. For a writer that builds its own statement.
 */
export function outboxTraceContext(): string | null {
  if (!tracing.enabled) return null;
  const carrier = activeTraceCarrier();
  return carrier ? JSON.stringify(carrier) : null;
}
