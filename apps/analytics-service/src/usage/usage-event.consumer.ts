import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { Streams, USAGE_INCREMENTED_FILTER, UsageIncrementedRecord } from '@licensing/contracts';
import { isDataError } from '@licensing/shared/database';
import { BusClient, DurableConsumer, decodeMessage, storeBatch } from '@licensing/shared/messaging';
import { MeteredUsesRepository } from './metered-uses.repository';

/** Every replica binds the same durable consumer, so JetStream hands each event to one of them. */
const USAGE_EVENT_CONSUMER = 'analytics-usage-events';
const BATCH_SIZE = 256;
const BATCH_WAIT_MS = 5_000;
/** A batch PostgreSQL could not store comes back after this long, rather than at once in a tight loop. */
const RETRY_DELAY_MS = 5_000;

/**
 * Counts accepted usage increments from the events stream. An event is acknowledged only once
 * stored, and stored once by its id: at-least-once delivery becomes exactly-once counting. An
 * event that does not decode, or that PostgreSQL refuses for its content, is set aside in the
 * dead-letter stream.
 */
@Injectable()
export class UsageEventConsumer implements BeforeApplicationShutdown {
  private readonly consumer: DurableConsumer<UsageIncrementedRecord>;

  constructor(bus: BusClient, uses: MeteredUsesRepository) {
    this.consumer = new DurableConsumer<UsageIncrementedRecord>(bus, {
      durable: USAGE_EVENT_CONSUMER,
      stream: Streams.events,
      filterSubject: USAGE_INCREMENTED_FILTER,
      decode: (message) => decodeMessage(UsageIncrementedRecord, message.data),
      process: (batch) =>
        storeBatch(batch, (events) => uses.insert(events), { isRefusal: isDataError, by: 'PostgreSQL' }),
      batchSize: BATCH_SIZE,
      batchWaitMs: BATCH_WAIT_MS,
      retryDelayMs: RETRY_DELAY_MS,
    });
  }

  /** Called once the schema is migrated (see app.ts), as the sync-report consumer is. */
  start(): Promise<void> {
    return this.consumer.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.consumer.stop();
  }
}
