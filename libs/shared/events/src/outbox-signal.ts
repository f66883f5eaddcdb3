import { EntityManager } from 'typeorm';

/** The PostgreSQL notification channel of a schema's outbox: its relay listens on it. */
export function outboxChannel(schema: string | undefined): string {
  return `outbox_${schema ?? 'public'}`;
}

/**
 * Tells the outbox relays of the writer's schema that a row is waiting. Called inside the writing
 * transaction: PostgreSQL delivers a notification at commit and only then (never for a rollback),
 * and several in one transaction as one.
 */
export async function signalOutbox(manager: EntityManager): Promise<void> {
  const schema = (manager.connection.options as { schema?: string }).schema;
  await manager.query('SELECT pg_notify($1, $2)', [outboxChannel(schema), '']);
}
