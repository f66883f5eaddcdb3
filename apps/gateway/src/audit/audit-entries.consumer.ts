import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditEntryRecord, Streams } from '@licensing/contracts';
import { isDataError } from '@licensing/shared/database';
import {
  BusClient,
  DurableConsumer,
  decodeMessage,
  organizationOfSubject,
  storeBatch,
} from '@licensing/shared/messaging';
import { AuditEventsService } from './audit-events.service';

/** Every gateway replica binds the same durable consumer, so JetStream hands each entry to one of them. */
export const AUDIT_CONSUMER = 'gateway-audit';
const BATCH_SIZE = 100;
/** How long one pull request stays open; entries are stored as they arrive. */
const PULL_OPEN_MS = 5_000;
/** An entry PostgreSQL could not store (database away) comes back after this long. */
const RETRY_DELAY_MS = 5_000;

type Decoded = { entry: AuditEntryRecord } | { problem: string };

/**
 * Reads one message of the AUDIT_EVENTS stream with the contract's own validators. `orgOfSubject`
 * is the organization its subject names: an entry filed under another organization's subject is
 * refused, so one organization can never write into another's log.
 */
export function decodeAuditEntry(data: Uint8Array, orgOfSubject: string | undefined): Decoded {
  const decoded = decodeMessage(AuditEntryRecord, data);
  if ('problem' in decoded) return decoded;
  if (orgOfSubject?.toLowerCase() !== decoded.value.org_id.toLowerCase()) {
    return { problem: 'org_id is not the organization of the subject' };
  }
  return { entry: decoded.value };
}

/**
 * Stores the services' audit entries from the AUDIT_EVENTS stream into the audit log, a batch per
 * insert. An entry is acknowledged only once its row is committed, so a crash means redelivery,
 * never loss, and the primary key on the entry id makes the redelivery a no-op. A malformed entry,
 * or one PostgreSQL refuses for its content, is set aside in the dead-letter stream: never retried
 * for ever, never lost.
 */
@Injectable()
export class AuditEntriesConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly consumer: DurableConsumer<AuditEntryRecord>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    bus: BusClient,
    private readonly audit: AuditEventsService,
  ) {
    this.consumer = new DurableConsumer<AuditEntryRecord>(bus, {
      durable: AUDIT_CONSUMER,
      stream: Streams.audit,
      decode: (message) => {
        const decoded = decodeAuditEntry(message.data, organizationOfSubject(message.subject));
        return 'problem' in decoded ? decoded : { value: decoded.entry };
      },
      process: (batch) =>
        storeBatch(batch, (entries) => this.audit.store(this.dataSource.manager, entries), {
          isRefusal: isDataError,
          by: 'PostgreSQL',
        }),
      batchSize: BATCH_SIZE,
      batchWaitMs: PULL_OPEN_MS,
      retryDelayMs: RETRY_DELAY_MS,
    });
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
