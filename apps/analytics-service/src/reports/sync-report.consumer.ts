import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { Streams, SyncReportRecord, SyncStatus } from '@licensing/contracts';
import { isDataError } from '@licensing/shared/database';
import { BusClient, Delivery, DurableConsumer, Outcome, namespaced } from '@licensing/shared/messaging';
import { ANALYTICS_CONFIG, AnalyticsServiceConfig } from '../config';
import { SyncReportsRepository } from './sync-reports.repository';

/** Every replica binds the same durable consumer, so JetStream hands each report to one of them. */
export const SYNC_REPORT_CONSUMER = 'analytics-service';
const ACK_WAIT_MS = 30_000;
/** Enough for every replica to hold a full batch while a few batches wait for a retry. */
const MAX_ACK_PENDING = 20_000;
/** A batch PostgreSQL could not store comes back after this long, rather than at once in a tight loop. */
const RETRY_DELAY_MS = 5_000;

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
 * that one row) is set aside at once in the dead-letter stream, with the reason: it neither
 * recycles for ever nor holds one of the consumer's pending slots, so one organization's bad
 * reports cannot stall anyone's analytics. A failure of the store itself (PostgreSQL down) is not
 * the report's fault: those are retried until they succeed.
 */
@Injectable()
export class SyncReportConsumer implements BeforeApplicationShutdown {
  private readonly consumer: DurableConsumer<SyncReportRecord>;

  constructor(
    bus: BusClient,
    private readonly reports: SyncReportsRepository,
    @Inject(ANALYTICS_CONFIG) config: AnalyticsServiceConfig,
  ) {
    const prefix = namespaced(bus.namespace, 'licensing.sync-reports.');
    this.consumer = new DurableConsumer(bus, {
      durable: SYNC_REPORT_CONSUMER,
      stream: Streams.syncReports,
      decode: (message) => {
        const orgOfSubject = message.subject.startsWith(prefix)
          ? message.subject.slice(prefix.length)
          : undefined;
        const decoded = decodeSyncReport(message.data, orgOfSubject);
        return 'problem' in decoded ? decoded : { value: decoded.report };
      },
      process: (batch) => this.store(batch),
      batchSize: config.ANALYTICS_BATCH_SIZE,
      batchWaitMs: config.ANALYTICS_BATCH_WAIT_MS,
      ackWaitMs: ACK_WAIT_MS,
      maxAckPending: MAX_ACK_PENDING,
      retryDelayMs: RETRY_DELAY_MS,
    });
  }

  /**
   * Called once the schema is migrated (see app.ts): Nest's bootstrap hooks run before migrations
   * in a bus service, and a batch written to a missing table would only bounce.
   */
  start(): Promise<void> {
    return this.consumer.start();
  }

  /** Before Nest closes the NATS connection and the pool: the batch in hand is stored and acknowledged. */
  beforeApplicationShutdown(): Promise<void> {
    return this.consumer.stop();
  }

  /** Reports set aside since boot, for the operator's metrics. */
  get deadLettered(): number {
    return this.consumer.deadLettered;
  }

  private async store(batch: Delivery<SyncReportRecord>[]): Promise<Outcome[]> {
    try {
      await this.reports.insert(batch.map(({ value }) => value));
      return batch.map(() => 'ack');
    } catch (error) {
      if (!isDataError(error) || batch.length === 1) return this.refusedAlone(error, batch);
      // PostgreSQL refused the batch for its content: store the others, set the report at fault aside.
      const outcomes: Outcome[] = [];
      for (const item of batch) {
        outcomes.push(
          ...(await this.reports.insert([item.value]).then(
            (): Outcome[] => ['ack'],
            (refusal: unknown) => this.refusedAlone(refusal, [item]),
          )),
        );
      }
      return outcomes;
    }
  }

  /** A content refusal of these reports sets them aside; any other failure retries the whole batch. */
  private refusedAlone(error: unknown, items: Delivery<SyncReportRecord>[]): Outcome[] {
    if (!isDataError(error)) throw error;
    return items.map(() => ({ deadLetter: `refused by PostgreSQL: ${String(error)}` }));
  }
}
