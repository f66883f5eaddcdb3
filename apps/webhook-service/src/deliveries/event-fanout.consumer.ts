import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { Streams, WebhookEventRecord, parseEventSubject, webhookMatches } from '@licensing/contracts';
import { isDataError } from '@licensing/shared/database';
import { BusClient, Decoded, DurableConsumer, decodeMessage, storeBatch } from '@licensing/shared/messaging';
import { DeliveriesRepository, WebhookEvent } from './deliveries.repository';
import { DeliveryWorker } from './delivery.worker';

/** Every replica binds the same durable consumer, so JetStream hands each event to one of them. */
const WEBHOOK_EVENTS_CONSUMER = 'webhook-service';
const BATCH_SIZE = 256;
const PULL_OPEN_MS = 5_000;
const RETRY_DELAY_MS = 2_000;

/**
 * Reads an event of LICENSING_EVENTS as it will be delivered: exactly `{id, type, org_id,
 * occurred_at, data}` (members added for internal consumers, such as `serial_status`, stay
 * internal). An event filed under another organization's subject, or under a subject that names
 * none (`parseEventSubject`), is refused. Serialized only if an endpoint receives it (`storedEvent`).
 */
function decodeWebhookEvent(data: Uint8Array, orgOfSubject: string | undefined): Decoded<WebhookEvent> {
  const decoded = decodeMessage(WebhookEventRecord, data);
  if ('problem' in decoded) return decoded;
  const { id, type, org_id, occurred_at, data: resource } = decoded.value;
  const event = { id: id.toLowerCase(), type, org_id: org_id.toLowerCase(), occurred_at, data: resource };
  if (orgOfSubject === undefined) return { problem: 'the subject is not an event subject' };
  if (orgOfSubject.toLowerCase() !== event.org_id) {
    return { problem: 'org_id is not the organization of the subject' };
  }
  return { value: event };
}

/**
 * Fans every event of the stream (every type) out to the matching endpoints: one delivery row per
 * (event, endpoint), written idempotently in one transaction per batch, and the batch is
 * acknowledged only once that has committed — a crash before means redelivery, and the unique
 * (endpoint_id, event_id) turns the redelivery into nothing. Delivering is the worker's job, so a
 * slow receiver never holds the stream.
 */
@Injectable()
export class EventFanoutConsumer implements BeforeApplicationShutdown {
  private readonly consumer: DurableConsumer<WebhookEvent>;

  constructor(
    bus: BusClient,
    private readonly queue: DeliveriesRepository,
    private readonly worker: DeliveryWorker,
  ) {
    this.consumer = new DurableConsumer<WebhookEvent>(bus, {
      durable: WEBHOOK_EVENTS_CONSUMER,
      stream: Streams.events,
      decode: (message) =>
        decodeWebhookEvent(message.data, parseEventSubject(message.subject, bus.namespace)?.orgId),
      process: async (batch) => {
        let created = 0;
        const outcomes = await storeBatch(
          batch,
          async (events) => (created += await this.queue.fanOut(events, webhookMatches)),
          { isRefusal: isDataError, by: 'PostgreSQL' },
        );
        // The worker looks for due deliveries when there are new ones, not after every batch.
        if (created > 0) this.worker.wake();
        return outcomes;
      },
      batchSize: BATCH_SIZE,
      batchWaitMs: PULL_OPEN_MS,
      retryDelayMs: RETRY_DELAY_MS,
    });
  }

  /** Called once the schema is migrated (app.ts). */
  start(): Promise<void> {
    return this.consumer.start();
  }

  /** Stops pulling; the batch in hand is written and acknowledged, the rest is redelivered. */
  beforeApplicationShutdown(): Promise<void> {
    return this.consumer.stop();
  }
}
