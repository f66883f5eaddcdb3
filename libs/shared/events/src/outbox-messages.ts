import { createHash } from 'node:crypto';
import { AUDIT_ENTRIES_PER_MESSAGE, isAuditSubject } from '@licensing/contracts';

/** What the relay reads of an outbox row. */
export interface OutboxRecord {
  id: string;
  subject: string;
  payload: string;
  traceContext: string | null;
}

/** One JetStream message the relay publishes. */
export interface OutboxMessage {
  subject: string;
  payload: string;
  /** The `Nats-Msg-Id`: the same rows always make the same id, so a batch published again is dropped. */
  id: string;
  /** The trace the message is published in: its (first) row's. */
  traceContext: string | null;
}

export interface GroupLimits {
  entries: number;
  /**
   * UTF-16 code units of the entries' JSON, summed. A code unit is at most 3 bytes of UTF-8, so
   * 256 Ki of them keep a message under NATS's default `max_payload` of 1 MiB.
   */
  chars: number;
}

const DEFAULT_LIMITS: GroupLimits = { entries: AUDIT_ENTRIES_PER_MESSAGE, chars: 256 * 1024 };

/**
 * The messages one relay batch goes out as, in the order of its rows. Every event is a message of
 * its own (subscribers read one event per message). The audit entries of one organization travel
 * together, a JSON array per message: the gateway is their one reader, and under load a batch holds
 * dozens of them, each of which would otherwise cost JetStream a stored message, a delivery and two
 * acknowledgements. A lone entry stays a plain object with its own id as `Nats-Msg-Id`, as before.
 */
export function outboxMessages(rows: OutboxRecord[], limits: GroupLimits = DEFAULT_LIMITS): OutboxMessage[] {
  const out: Array<OutboxMessage | OutboxRecord[]> = [];
  const open = new Map<string, { rows: OutboxRecord[]; chars: number }>();
  for (const row of rows) {
    if (!isAuditSubject(row.subject)) {
      out.push(message(row));
      continue;
    }
    const group = open.get(row.subject);
    if (group && group.rows.length < limits.entries && group.chars + row.payload.length <= limits.chars) {
      group.rows.push(row);
      group.chars += row.payload.length;
    } else {
      const started = { rows: [row], chars: row.payload.length };
      open.set(row.subject, started);
      out.push(started.rows);
    }
  }
  return out.map((each) => (Array.isArray(each) ? auditMessage(each) : each));
}

function message(row: OutboxRecord): OutboxMessage {
  return { subject: row.subject, payload: row.payload, id: row.id, traceContext: row.traceContext };
}

function auditMessage(rows: OutboxRecord[]): OutboxMessage {
  if (rows.length === 1) return message(rows[0]);
  const ids = createHash('sha256');
  for (const row of rows) ids.update(row.id);
  return {
    subject: rows[0].subject,
    payload: `[${rows.map((row) => row.payload).join(',')}]`,
    id: `audit-${ids.digest('base64url')}`,
    traceContext: rows[0].traceContext,
  };
}
