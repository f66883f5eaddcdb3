import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AUDIT_ENTRIES_PER_MESSAGE, AuditEntryRecord, Streams } from '@licensing/contracts';
import { isDataError } from '@licensing/shared/database';
import {
  BusClient,
  DurableConsumer,
  organizationOfSubject,
  parseMessage,
  storeBatch,
  validateRecord,
} from '@licensing/shared/messaging';
import { AuditEventsService } from './audit-events.service';

/** Every gateway replica binds the same durable consumer, so JetStream hands each entry to one of them. */
export const AUDIT_CONSUMER = 'gateway-audit';
const BATCH_SIZE = 100;
/** How long one pull request stays open; entries are stored as they arrive. */
const PULL_OPEN_MS = 5_000;
/** An entry PostgreSQL could not store (database away) comes back after this long. */
const RETRY_DELAY_MS = 5_000;

type Decoded = { entries: AuditEntryRecord[] } | { problem: string };

/**
 * Reads one message of the AUDIT_EVENTS stream with the contract's own validators: an entry, or an
 * array of up to AUDIT_ENTRIES_PER_MESSAGE entries (a relay batch's, of one organization).
 * `orgOfSubject` is the organization its subject names: an entry filed under another
 * organization's subject is refused, so one organization can never write into another's log. A
 * message is taken whole or refused whole.
 */
function decodeAuditEntries(data: Uint8Array, orgOfSubject: string | undefined): Decoded {
  const parsed = parseMessage(data);
  if ('problem' in parsed) return parsed;
  const several = Array.isArray(parsed.json);
  const items: unknown[] = several ? (parsed.json as unknown[]) : [parsed.json];
  if (items.length === 0 || items.length > AUDIT_ENTRIES_PER_MESSAGE) {
    return { problem: `an array of 1 to ${AUDIT_ENTRIES_PER_MESSAGE} entries expected` };
  }
  const org = orgOfSubject?.toLowerCase();
  const entries: AuditEntryRecord[] = [];
  for (const [index, item] of items.entries()) {
    const decoded = decodeEntry(item, org);
    if ('problem' in decoded)
      return { problem: several ? `entry ${index}: ${decoded.problem}` : decoded.problem };
    entries.push(decoded.value);
  }
  return { entries };
}

function decodeEntry(
  item: unknown,
  org: string | undefined,
): { value: AuditEntryRecord } | { problem: string } {
  const decoded = validateRecord(AuditEntryRecord, item);
  if ('problem' in decoded) return decoded;
  if (org !== decoded.value.org_id.toLowerCase())
    return { problem: 'org_id is not the organization of the subject' };
  return decoded;
}

/**
 * Stores the services' audit entries from the AUDIT_EVENTS stream into the audit log, a batch of
 * messages per insert. A message is acknowledged only once its entries are committed, so a crash
 * means redelivery, never loss, and the primary key on the entry id makes the redelivery a no-op.
 * A malformed message, or one PostgreSQL refuses for its content, is set aside in the dead-letter
 * stream: never retried for ever, never lost. Of a message of several entries refused, the entries
 * PostgreSQL accepts are stored before it is set aside.
 */
@Injectable()
export class AuditEntriesConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly consumer: DurableConsumer<AuditEntryRecord[]>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    bus: BusClient,
    private readonly audit: AuditEventsService,
  ) {
    this.consumer = new DurableConsumer<AuditEntryRecord[]>(bus, {
      durable: AUDIT_CONSUMER,
      stream: Streams.audit,
      decode: (message) => {
        const decoded = decodeAuditEntries(message.data, organizationOfSubject(message.subject));
        return 'problem' in decoded ? decoded : { value: decoded.entries };
      },
      process: (batch) =>
        storeBatch(batch, (messages) => this.store(messages), { isRefusal: isDataError, by: 'PostgreSQL' }),
      batchSize: BATCH_SIZE,
      batchWaitMs: PULL_OPEN_MS,
      retryDelayMs: RETRY_DELAY_MS,
    });
  }

  /**
   * The entries of these messages in one insert. `storeBatch` retries a refused batch message by
   * message; a message of several refused on its own has each entry tried alone, and the first
   * refusal is rethrown once the others are stored, so that the message is set aside.
   */
  private async store(messages: AuditEntryRecord[][]): Promise<void> {
    const store = (entries: AuditEntryRecord[]) => this.audit.store(this.dataSource.manager, entries);
    const entries = messages.flat();
    try {
      await store(entries);
    } catch (error) {
      if (messages.length > 1 || entries.length === 1 || !isDataError(error)) throw error;
      let refusal: unknown;
      for (const entry of entries) {
        await store([entry]).catch((each: unknown) => {
          if (!isDataError(each)) throw each;
          refusal ??= each;
        });
      }
      if (refusal !== undefined) throw refusal;
    }
  }

  /**
   * The gateway migrates before Nest bootstraps, so the table exists. Binding happens in the
   * background: the gateway serves (and audits API keys) even while JetStream is unreachable.
   */
  onApplicationBootstrap(): void {
    this.consumer.startInBackground();
  }

  /** Stops pulling; the batch in hand is stored and acknowledged, the unacknowledged rest redelivered. */
  beforeApplicationShutdown(): Promise<void> {
    return this.consumer.stop();
  }
}
