import { Inject, Injectable, Logger, BeforeApplicationShutdown } from '@nestjs/common';
import { AckPolicy, Consumer, DeliverPolicy, JetStreamManager, JsMsg, NatsError, nanos } from 'nats';
import { Streams, SyncReportRecord, SyncStatus } from '@licensing/contracts';
import { isDataError } from '@licensing/shared/database';
import { BusClient, deadLetter, ensureStream, namespaced } from '@licensing/shared/messaging';
import { ANALYTICS_CONFIG, AnalyticsServiceConfig } from '../config';
import { SyncReportsRepository } from './sync-reports.repository';

/** Every replica binds the same durable consumer, so JetStream hands each report to one of them. */
export const SYNC_REPORT_CONSUMER = 'analytics-service';
const ACK_WAIT_MS = 30_000;
/** Enough for every replica to hold a full batch while a few batches wait for a retry. */
const MAX_ACK_PENDING = 20_000;
/** A batch PostgreSQL could not store comes back after this long, rather than at once in a tight loop. */
const RETRY_DELAY_MS = 5_000;
const MAX_BACKOFF_MS = 5_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_FEATURES = 100;
const MAX_SEATS_IN_USE = 2_147_483_647;

type Decoded = { report: SyncReportRecord } | { problem: string };

/** PostgreSQL stores no NUL, and its JSON parser refuses a lone surrogate. */
const storable = (text: string): boolean => !text.includes('\u0000') && text.isWellFormed();

/**
 * Reads one message of the SYNC_REPORTS stream. Anything PostgreSQL could refuse (a bad uuid, an
 * over-long string, a NUL character) is refused here instead, so that one bad report cannot make
 * its whole batch fail again and again. `orgOfSubject` is the organization the subject names: a
 * report filed under another organization's subject is refused too.
 */
export function decodeSyncReport(data: Uint8Array, orgOfSubject?: string): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    return { problem: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: 'not an object' };
  const raw = value as Record<string, unknown>;

  const problems: string[] = [];
  const uuid = (field: string): string => {
    const v = raw[field];
    if (typeof v !== 'string' || !UUID.test(v)) problems.push(`${field} must be a UUID`);
    return String(v).toLowerCase();
  };
  const text = (field: string, max: number, nullable: boolean): string | null => {
    const v = raw[field];
    if (nullable && (v === null || v === undefined)) return null;
    if (typeof v !== 'string' || v.length < 1 || v.length > max || !storable(v)) {
      problems.push(`${field} must be a string of 1 to ${max} characters`);
    }
    return v as string;
  };

  const report: SyncReportRecord = {
    report_id: uuid('report_id'),
    org_id: uuid('org_id'),
    license_id: uuid('license_id'),
    product_id: uuid('product_id'),
    serial: text('serial', 200, false)!,
    hardware_fingerprint: text('hardware_fingerprint', 512, true),
    app_version: text('app_version', 64, true),
    features_used: [],
    seats_in_use: null,
    status: raw.status as SyncStatus,
    received_at: '',
  };

  const features = raw.features_used ?? [];
  if (
    !Array.isArray(features) ||
    features.length > MAX_FEATURES ||
    !features.every((f) => typeof f === 'string' && f.length >= 1 && f.length <= 100 && storable(f))
  ) {
    problems.push(`features_used must hold at most ${MAX_FEATURES} strings of 1 to 100 characters`);
  } else {
    // A feature named twice in one report was still used once in it.
    report.features_used = [...new Set(features as string[])];
  }

  const seats = raw.seats_in_use;
  if (seats !== null && seats !== undefined) {
    if (typeof seats !== 'number' || !Number.isInteger(seats) || seats < 0 || seats > MAX_SEATS_IN_USE) {
      problems.push('seats_in_use must be a non-negative integer');
    } else {
      report.seats_in_use = seats;
    }
  }

  // Not checked against today's SYNC_STATUSES: a status added later must not cost the report.
  if (
    typeof raw.status !== 'string' ||
    raw.status.length < 1 ||
    raw.status.length > 20 ||
    !storable(raw.status)
  ) {
    problems.push('status must be a string of 1 to 20 characters');
  }

  const receivedAt = typeof raw.received_at === 'string' ? new Date(raw.received_at) : undefined;
  if (!receivedAt || Number.isNaN(receivedAt.getTime())) problems.push('received_at must be a date-time');
  else report.received_at = receivedAt.toISOString();

  if (problems.length === 0 && orgOfSubject !== undefined && orgOfSubject.toLowerCase() !== report.org_id) {
    problems.push('org_id is not the organization of the subject');
  }
  return problems.length > 0 ? { problem: problems.join('; ') } : { report };
}

/**
 * Moves usage reports from the SYNC_REPORTS stream into PostgreSQL, a batch at a time: fetch up to
 * ANALYTICS_BATCH_SIZE, write them in one statement, then acknowledge them. A report is
 * acknowledged only once it is stored, so a crash anywhere means redelivery, never loss; the
 * primary key on report_id turns the redelivery into a no-op.
 *
 * A report that can never be stored for its own content (it does not decode, or PostgreSQL refuses
 * that one row) is set aside at once in the dead-letter stream, with the reason, and terminated:
 * it neither recycles for ever nor holds one of the consumer's pending slots, so one
 * organization's bad reports cannot stall anyone's analytics. A failure of the store itself
 * (PostgreSQL down) is not the report's fault: those are retried until they succeed.
 */
@Injectable()
export class SyncReportConsumer implements BeforeApplicationShutdown {
  private readonly logger = new Logger(SyncReportConsumer.name);
  private running = false;
  private loop?: Promise<void>;
  /** Reports set aside since boot: for the operator's metrics (the DEAD_LETTERS stream holds them all). */
  deadLettered = 0;
  private wake?: () => void;

  constructor(
    private readonly bus: BusClient,
    private readonly reports: SyncReportsRepository,
    @Inject(ANALYTICS_CONFIG) private readonly config: AnalyticsServiceConfig,
  ) {}

  /**
   * Called once the schema is migrated (see app.ts): Nest's bootstrap hooks run before migrations
   * in a bus service, and a batch written to a missing table would only bounce. Binding the
   * consumer is awaited so that a NATS without JetStream stops the boot rather than failing quietly.
   */
  async start(): Promise<void> {
    if (this.running) return;
    const consumer = await this.bind();
    this.running = true;
    this.loop = this.run(consumer);
  }

  /**
   * Before Nest's shutdown hooks close the NATS connection and the pool: stop fetching, let the
   * fetch in flight end (at most ANALYTICS_BATCH_WAIT_MS) and store and acknowledge what it brought.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    this.loop = undefined;
  }

  private async run(bound: Consumer): Promise<void> {
    let consumer: Consumer | undefined = bound;
    let backoff = 100;
    while (this.running) {
      try {
        consumer ??= await this.bind();
        const messages = await this.fetch(consumer);
        if (messages.length > 0) await this.store(messages);
        backoff = 100;
      } catch (error) {
        // NATS away, the stream or consumer deleted under us: bind again once it is back.
        consumer = undefined;
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        if (this.running) {
          this.logger.warn({
            msg: 'sync report consumer failed; retrying',
            err: String(error),
            retry_in_ms: backoff,
          });
          await this.pause(backoff);
        }
      }
    }
  }

  /** Creates the stream and the durable consumer when missing (the publisher may not have booted yet). */
  private async bind(): Promise<Consumer> {
    const connection = this.bus.connection();
    const { name: stream, manager } = await ensureStream(connection, this.bus.namespace, Streams.syncReports);
    await ensureStream(connection, this.bus.namespace, Streams.deadLetters);
    await this.ensureConsumer(manager, stream);
    return connection.jetstream().consumers.get(stream, SYNC_REPORT_CONSUMER);
  }

  private async ensureConsumer(manager: JetStreamManager, stream: string): Promise<void> {
    const settings = {
      ack_wait: nanos(ACK_WAIT_MS),
      // A report is retried until it is stored, or set aside in the dead-letter stream; never dropped.
      max_deliver: -1,
      max_ack_pending: MAX_ACK_PENDING,
    };
    const exists = await manager.consumers.info(stream, SYNC_REPORT_CONSUMER).then(
      () => true,
      (error: unknown) => {
        if ((error as NatsError).api_error?.err_code === 10014) return false; // consumer not found
        throw error;
      },
    );
    if (exists) {
      await manager.consumers.update(stream, SYNC_REPORT_CONSUMER, settings);
      return;
    }
    await manager.consumers
      .add(stream, {
        durable_name: SYNC_REPORT_CONSUMER,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ...settings,
      })
      .catch(async (error: unknown) => {
        // Another replica created it between our lookup and our add.
        await manager.consumers.info(stream, SYNC_REPORT_CONSUMER).catch(() => {
          throw error;
        });
      });
  }

  private async fetch(consumer: Consumer): Promise<JsMsg[]> {
    const messages: JsMsg[] = [];
    const batch = await consumer.fetch({
      max_messages: this.config.ANALYTICS_BATCH_SIZE,
      expires: this.config.ANALYTICS_BATCH_WAIT_MS,
    });
    for await (const message of batch) messages.push(message);
    return messages;
  }

  private async store(messages: JsMsg[]): Promise<void> {
    const prefix = namespaced(this.bus.namespace, 'licensing.sync-reports.');
    const accepted: Array<{ message: JsMsg; report: SyncReportRecord }> = [];
    const settingAside: Array<Promise<void>> = [];
    for (const message of messages) {
      const orgOfSubject = message.subject.startsWith(prefix)
        ? message.subject.slice(prefix.length)
        : undefined;
      const decoded = decodeSyncReport(message.data, orgOfSubject);
      if ('problem' in decoded) settingAside.push(this.setAside(message, `malformed: ${decoded.problem}`));
      else accepted.push({ message, report: decoded.report });
    }
    await Promise.all(settingAside);
    if (accepted.length === 0) return;
    try {
      const inserted = await this.reports.insert(accepted.map((a) => a.report));
      for (const { message } of accepted) message.ack();
      this.logger.debug({ msg: 'sync reports stored', received: accepted.length, inserted });
    } catch (error) {
      if (isDataError(error) && accepted.length > 1) {
        await this.storeOneByOne(accepted);
        return;
      }
      this.reject(accepted, error);
    }
  }

  /** PostgreSQL refused the batch for its content: store the others and set the report at fault aside. */
  private async storeOneByOne(accepted: Array<{ message: JsMsg; report: SyncReportRecord }>): Promise<void> {
    for (const item of accepted) {
      try {
        await this.reports.insert([item.report]);
        item.message.ack();
      } catch (error) {
        if (isDataError(error)) await this.setAside(item.message, `refused by PostgreSQL: ${String(error)}`);
        else this.reject([item], error);
      }
    }
  }

  /** The store failed (not the reports): every one of them comes back after RETRY_DELAY_MS. */
  private reject(items: Array<{ message: JsMsg; report: SyncReportRecord }>, error: unknown): void {
    this.logger.warn({ msg: 'sync reports not stored; retrying', count: items.length, err: String(error) });
    for (const { message } of items) message.nak(RETRY_DELAY_MS);
  }

  /**
   * Moves a report that can never be stored to the dead-letter stream. If even that fails (NATS
   * away), the report is left to come back, and is judged again then.
   */
  private async setAside(message: JsMsg, reason: string): Promise<void> {
    try {
      await deadLetter(this.bus, message, SYNC_REPORT_CONSUMER, reason);
      this.deadLettered += 1;
      // warn, not error: the shared NestPinoLogger prints an object given to error() as "[object Object]".
      this.logger.warn({
        msg: 'sync report set aside in the dead-letter stream',
        subject: message.subject,
        stream_seq: message.seq,
        reason,
      });
    } catch (error) {
      this.logger.warn({ msg: 'could not set a sync report aside; retrying it', err: String(error) });
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
