import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { Streams, SyncReportRecord } from '@licensing/contracts';
import { isDataError } from '@licensing/shared/database';
import {
  BusClient,
  DurableConsumer,
  DurableConsumerSpec,
  decodeMessage,
  organizationOfSubject,
  storeBatch,
} from '@licensing/shared/messaging';
import { ANALYTICS_CONFIG, AnalyticsServiceConfig } from '../config';
import { PartitionsService, utcDay } from '../partitions/partitions.service';
import { SyncReportsRepository } from './sync-reports.repository';

/** Every replica binds the same durable consumer, so JetStream hands each report to one of them. */
export const SYNC_REPORT_CONSUMER = 'analytics-service';
const ACK_WAIT_MS = 30_000;
/** Enough for every replica to hold a full batch while a few batches wait for a retry. */
const MAX_ACK_PENDING = 20_000;
/** A batch PostgreSQL could not store comes back after this long, rather than at once in a tight loop. */
const RETRY_DELAY_MS = 5_000;

type Decoded = { report: SyncReportRecord } | { problem: string };

/**
 * Reads one message of the SYNC_REPORTS stream with the record's own validators: anything
 * PostgreSQL could refuse (a bad uuid, an over-long string, a NUL character, a lone surrogate) is
 * refused here instead, so that one bad report cannot make its whole batch fail. `orgOfSubject` is
 * the organization the subject names: a report filed under another organization's subject is
 * refused too.
 */
export function decodeSyncReport(data: Uint8Array, orgOfSubject?: string): Decoded {
  const decoded = decodeMessage(SyncReportRecord, data);
  if ('problem' in decoded) return decoded;
  const raw = decoded.value;
  const report: SyncReportRecord = {
    report_id: raw.report_id.toLowerCase(),
    org_id: raw.org_id.toLowerCase(),
    license_id: raw.license_id.toLowerCase(),
    product_id: raw.product_id.toLowerCase(),
    serial: raw.serial,
    hardware_fingerprint: raw.hardware_fingerprint ?? null,
    app_version: raw.app_version ?? null,
    // A feature named twice in one report was still used once in it.
    features_used: [...new Set(raw.features_used ?? [])],
    seats_in_use: raw.seats_in_use ?? null,
    status: raw.status,
    received_at: new Date(raw.received_at).toISOString(),
  };
  if (orgOfSubject !== undefined && orgOfSubject.toLowerCase() !== report.org_id) {
    return { problem: 'org_id is not the organization of the subject' };
  }
  return { report };
}

/**
 * Moves usage reports from the SYNC_REPORTS stream into PostgreSQL in batches: take up to
 * ANALYTICS_BATCH_SIZE, write them and fold them into the rollups in one statement, then
 * acknowledge them; ANALYTICS_CONCURRENCY batches at once, as that many replicas would. A report is
 * acknowledged only once it is stored, so a crash anywhere means redelivery, never loss; the
 * report ids' unique index turns the redelivery into a no-op.
 *
 * A report that can never be stored for its own content (it does not decode, or PostgreSQL refuses
 * that one row) is set aside at once in the dead-letter stream, with the reason: it neither
 * recycles for ever nor holds one of the consumer's pending slots, so one organization's bad
 * reports cannot stall anyone's analytics. A failure of the store itself (PostgreSQL down) is not
 * the report's fault: those are retried until they succeed.
 */
@Injectable()
export class SyncReportConsumer implements BeforeApplicationShutdown {
  /** ANALYTICS_CONCURRENCY pullers of the one durable, each storing its own batch. */
  private readonly consumers: Array<DurableConsumer<SyncReportRecord>>;

  constructor(
    bus: BusClient,
    private readonly reports: SyncReportsRepository,
    private readonly partitions: PartitionsService,
    @Inject(ANALYTICS_CONFIG) config: AnalyticsServiceConfig,
  ) {
    const spec: DurableConsumerSpec<SyncReportRecord> = {
      durable: SYNC_REPORT_CONSUMER,
      stream: Streams.syncReports,
      decode: (message) => {
        const decoded = decodeSyncReport(message.data, organizationOfSubject(message.subject));
        return 'problem' in decoded ? decoded : { value: decoded.report };
      },
      process: (batch) =>
        storeBatch(batch, (reports) => this.store(reports), {
          isRefusal: isDataError,
          by: 'PostgreSQL',
        }),
      batchSize: config.ANALYTICS_BATCH_SIZE,
      batchWaitMs: config.ANALYTICS_BATCH_WAIT_MS,
      lingerMs: config.ANALYTICS_BATCH_LINGER_MS,
      ackWaitMs: ACK_WAIT_MS,
      maxAckPending: MAX_ACK_PENDING,
      retryDelayMs: RETRY_DELAY_MS,
    };
    this.consumers = Array.from(
      { length: config.ANALYTICS_CONCURRENCY },
      () => new DurableConsumer(bus, spec),
    );
  }

  /** A late report (the service was down) may need a day's partitions that were not made ahead. */
  private async store(reports: SyncReportRecord[]): Promise<number> {
    await this.partitions.ensure(reports.map((report) => utcDay(report.received_at)));
    return this.reports.insert(reports);
  }

  /**
   * Called once the schema is migrated (see app.ts): Nest's bootstrap hooks run before migrations
   * in a bus service, and a batch written to a missing table would only bounce.
   */
  async start(): Promise<void> {
    await Promise.all(this.consumers.map((consumer) => consumer.start()));
  }

  /** Before Nest closes the NATS connection and the pool: the batch in hand is stored and acknowledged. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.consumers.map((consumer) => consumer.stop()));
  }

  /** Reports set aside since boot, for the operator's metrics. */
  get deadLettered(): number {
    return this.consumers.reduce((sum, consumer) => sum + consumer.deadLettered, 0);
  }
}
