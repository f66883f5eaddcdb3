import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import {
  AckPolicy,
  Consumer,
  ConsumerMessages,
  DeliverPolicy,
  JetStreamManager,
  JsMsg,
  NatsError,
  nanos,
} from 'nats';
import { DataSource } from 'typeorm';
import { AuditEntryRecord, Streams } from '@licensing/contracts';
import { isDataError } from '@licensing/shared/database';
import { flattenValidationErrors } from '@licensing/shared/errors';
import { BusClient, deadLetter, ensureStream, namespaced } from '@licensing/shared/messaging';
import { AuditEventsService } from './audit-events.service';

/** Every gateway replica binds the same durable consumer, so JetStream hands each entry to one of them. */
export const AUDIT_CONSUMER = 'gateway-audit';
const BATCH_SIZE = 100;
/** How long one pull waits for entries; entries that arrive meanwhile are stored at once. */
const FETCH_WAIT_MS = 1_000;
const ACK_WAIT_MS = 30_000;
/** An entry PostgreSQL could not store (database away) comes back after this long. */
const RETRY_DELAY_MS = 5_000;
const MAX_BACKOFF_MS = 5_000;

type Decoded = { entry: AuditEntryRecord } | { problem: string };

/**
 * Reads one message of the AUDIT_EVENTS stream with the contract's own validators. `orgOfSubject`
 * is the organization its subject names: an entry filed under another organization's subject is
 * refused, so one organization can never write into another's log.
 */
export function decodeAuditEntry(data: Uint8Array, orgOfSubject: string | undefined): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    return { problem: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: 'not an object' };
  const entry = plainToInstance(AuditEntryRecord, value);
  const errors = validateSync(entry, { forbidUnknownValues: true, validationError: { target: false } });
  if (errors.length > 0) {
    return {
      problem: flattenValidationErrors(errors)
        .map((e) => `${e.field}: ${e.message}`)
        .join('; '),
    };
  }
  if (orgOfSubject?.toLowerCase() !== entry.org_id.toLowerCase()) {
    return { problem: 'org_id is not the organization of the subject' };
  }
  return { entry };
}

/**
 * Stores the services' audit entries from the AUDIT_EVENTS stream into the audit log. An entry is
 * acknowledged only once its row is committed, so a crash means redelivery, never loss, and the
 * primary key on the entry id makes the redelivery a no-op. A malformed entry, or one PostgreSQL
 * refuses for its content, is set aside in the dead-letter stream: never retried for ever, never lost.
 */
@Injectable()
export class AuditEntriesConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(AuditEntriesConsumer.name);
  private running = false;
  private loop?: Promise<void>;
  private batch?: ConsumerMessages;
  private wake?: () => void;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: BusClient,
    private readonly audit: AuditEventsService,
  ) {}

  /**
   * The gateway migrates before Nest bootstraps, so the table exists. Binding happens in the loop:
   * the gateway serves (and audits API keys) even while JetStream is unreachable.
   */
  onApplicationBootstrap(): void {
    this.running = true;
    this.loop = this.run();
  }

  /** Stops pulling; the entry in hand is stored and acknowledged, the unacknowledged rest redelivered. */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    this.batch?.stop();
    this.wake?.();
    await this.loop;
    this.loop = undefined;
  }

  private async run(): Promise<void> {
    let consumer: Consumer | undefined;
    let backoff = 100;
    while (this.running) {
      try {
        consumer ??= await this.bind();
        this.batch = await consumer.fetch({ max_messages: BATCH_SIZE, expires: FETCH_WAIT_MS });
        if (!this.running) this.batch.stop();
        for await (const message of this.batch) await this.store(message);
        backoff = 100;
      } catch (error) {
        // NATS away, the stream or consumer deleted under us: bind again once it is back.
        consumer = undefined;
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        if (this.running) {
          this.logger.warn({
            msg: 'audit consumer failed; retrying',
            err: String(error),
            retry_in_ms: backoff,
          });
          await this.pause(backoff);
        }
      }
    }
  }

  /** Creates the stream and the durable consumer when missing (no service may have published yet). */
  private async bind(): Promise<Consumer> {
    const connection = this.bus.connection();
    const { name: stream, manager } = await ensureStream(connection, this.bus.namespace, Streams.audit);
    await ensureStream(connection, this.bus.namespace, Streams.deadLetters);
    await this.ensureConsumer(manager, stream);
    return connection.jetstream().consumers.get(stream, AUDIT_CONSUMER);
  }

  private async ensureConsumer(manager: JetStreamManager, stream: string): Promise<void> {
    const exists = await manager.consumers.info(stream, AUDIT_CONSUMER).then(
      () => true,
      (error: unknown) => {
        if ((error as NatsError).api_error?.err_code === 10014) return false; // consumer not found
        throw error;
      },
    );
    if (exists) return;
    await manager.consumers
      .add(stream, {
        durable_name: AUDIT_CONSUMER,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(ACK_WAIT_MS),
        // Retried until stored; a malformed entry is set aside in the dead-letter stream instead.
        max_deliver: -1,
      })
      .catch(async (error: unknown) => {
        // Another replica created it between our lookup and our add.
        await manager.consumers.info(stream, AUDIT_CONSUMER).catch(() => {
          throw error;
        });
      });
  }

  private async store(message: JsMsg): Promise<void> {
    const prefix = namespaced(this.bus.namespace, 'licensing.audit.');
    const orgOfSubject = message.subject.startsWith(prefix)
      ? message.subject.slice(prefix.length)
      : undefined;
    const decoded = decodeAuditEntry(message.data, orgOfSubject);
    if ('problem' in decoded) {
      await this.setAside(message, `malformed: ${decoded.problem}`);
      return;
    }
    try {
      await this.audit.store(this.dataSource.manager, [decoded.entry]);
      message.ack();
    } catch (error) {
      if (isDataError(error)) {
        await this.setAside(message, `refused by PostgreSQL: ${String(error)}`);
        return;
      }
      this.logger.warn({
        msg: 'audit entry not stored; retrying',
        entry_id: decoded.entry.id,
        err: String(error),
      });
      message.nak(RETRY_DELAY_MS);
    }
  }

  /** An entry that can never be stored goes to the dead-letter stream; if even that fails, it comes back. */
  private async setAside(message: JsMsg, reason: string): Promise<void> {
    try {
      await deadLetter(this.bus, message, AUDIT_CONSUMER, reason);
      this.logger.warn({
        msg: 'audit entry set aside in the dead-letter stream',
        subject: message.subject,
        stream_seq: message.seq,
        reason,
      });
    } catch (error) {
      this.logger.warn({ msg: 'could not set an audit entry aside; retrying it', err: String(error) });
      message.nak(RETRY_DELAY_MS);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
