import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { LICENSE_EVENTS_FILTER, LicenseEventRecord, SerialStatus, Streams } from '@licensing/contracts';
import { BusClient, DurableConsumer, decodeMessage } from '@licensing/shared/messaging';
import { SerialStatusCache } from '@licensing/shared/serial-cache';

/** Shared by every replica: each event is applied by one of them. */
const DURABLE = 'revocation-service';
const BATCH_SIZE = 256;
const PULL_OPEN_MS = 5_000;
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 15_000;
/** After a closed generation opens, how much later its skipped events are delivered again. */
const OPEN_MARGIN_MS = 250;

/** How long an event waits before its next delivery while Redis is down: longer each time, capped. */
export function redeliveryDelayMs(redeliveryCount: number): number {
  return Math.min(RETRY_BASE_MS * Math.max(1, redeliveryCount), RETRY_MAX_MS);
}

/** A license event's serial status, and when it was produced (its `occurred_at`, epoch ms). */
interface LicenseChange {
  status: SerialStatus;
  producedAt: number;
}

/**
 * Keeps the serial-status cache current from license events (created, updated, suspended,
 * reinstated, expired, revoked), a batch per Redis pipeline. An event is acknowledged only once
 * Redis holds it; with Redis down it is redelivered later, backing off further each time, so an
 * entry cached before the outage cannot stay stale after it. Out-of-order delivery is harmless:
 * the cache refuses to replace a newer version. Each event carries the serial status the license
 * service built (the one producer of it, which also writes it through on revoke and PATCH), and
 * it is stored as is. An event that does not decode is set aside in the dead-letter stream: an
 * operator must see a license change the cache could not apply.
 */
@Injectable()
export class LicenseEventsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly consumer: DurableConsumer<LicenseChange>;

  constructor(bus: BusClient, cache: SerialStatusCache) {
    this.consumer = new DurableConsumer<LicenseChange>(bus, {
      durable: DURABLE,
      stream: Streams.events,
      filterSubject: LICENSE_EVENTS_FILTER,
      // The license service built the status; it is stored as is.
      decode: (message) => {
        const decoded = decodeMessage(LicenseEventRecord, message.data);
        if ('problem' in decoded) return decoded;
        const { serial_status: status, occurred_at } = decoded.value;
        return { value: { status, producedAt: Date.parse(occurred_at) } };
      },
      process: async (batch) => {
        try {
          const statuses = batch.map(({ value }) => value.status);
          const producedAt = batch.map(({ value }) => value.producedAt);
          if (await cache.putMany(statuses, producedAt)) return batch.map(() => 'ack');
          // Skipped: the generation is closed and new (an upgrade from the previous format). The
          // events come back once it opens. Those produced before it opened are then left out
          // (the cache fills them from PostgreSQL): an old process may have acknowledged a later
          // change of the same license without writing it here.
          const opensInMs = cache.closedForMs + OPEN_MARGIN_MS;
          return batch.map(() => ({ retryInMs: opensInMs }));
        } catch {
          // Logged by the cache. Back off further on each redelivery while Redis stays down.
          return batch.map(({ message }) => ({ retryInMs: redeliveryDelayMs(message.info.redeliveryCount) }));
        }
      },
      batchSize: BATCH_SIZE,
      batchWaitMs: PULL_OPEN_MS,
    });
  }

  onApplicationBootstrap(): Promise<void> {
    return this.consumer.start();
  }

  /** Stops pulling, then lets the batch in hand reach Redis; the unacknowledged rest is redelivered. */
  beforeApplicationShutdown(): Promise<void> {
    return this.consumer.stop();
  }
}
