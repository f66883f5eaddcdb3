import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import {
  AuditAction,
  AuditChanges,
  AuditEntryRecord,
  AuditResourceType,
  auditSubject,
} from '@licensing/contracts';
import { requestContext } from '@licensing/shared/logging';
import { OutboxRow, writeOutbox } from './outbox-signal';

export interface AuditInput {
  orgId: string;
  action: AuditAction;
  resourceType: AuditResourceType;
  resourceId: string;
  /** From `auditChanges(before, after)`. */
  changes: AuditChanges;
  /** Defaults to now; pass the change's own timestamp when there is one. */
  occurredAt?: Date;
}

/**
 * The audit entry of a change made in the current request: who (the API key in the request
 * context), from where, under which request id. Undefined when no API key asked for the change
 * (an expiry sweep, an operator's command): the audit log records what API keys did.
 */
export function auditEntry(input: AuditInput): AuditEntryRecord | undefined {
  const context = requestContext.current();
  if (!context?.actor) return undefined;
  return {
    id: randomUUID(),
    org_id: input.orgId,
    occurred_at: (input.occurredAt ?? new Date()).toISOString(),
    action: input.action,
    resource_type: input.resourceType,
    resource_id: input.resourceId,
    actor: {
      api_key_id: context.actor.api_key_id,
      prefix: context.actor.prefix,
      name: context.actor.name,
    },
    request_id: context.request_id,
    ip: context.ip ?? null,
    changes: input.changes,
  };
}

/**
 * Records the audit entry of a change inside the caller's transaction, through the outbox: it is
 * published to the AUDIT_EVENTS stream after commit (the gateway stores it), and a change that
 * rolls back leaves none.
 */
export async function recordAudit(manager: EntityManager, input: AuditInput): Promise<void> {
  const row = auditRow(input);
  if (row) await writeOutbox(manager, row);
}

/** The outbox row of the audit entry `recordAudit` would write, or undefined when no API key asked. */
export function auditRow(input: AuditInput): OutboxRow | undefined {
  const entry = auditEntry(input);
  return entry && { id: entry.id, subject: auditSubject(entry.org_id), payload: JSON.stringify(entry) };
}
