import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { PRODUCT_EVENTS_FILTER, ProductEventRecord, Streams } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { BusClient, DurableConsumer, Outcome, decodeMessage } from '@licensing/shared/messaging';
import { CatalogService } from './catalog.service';

/** Shared by every replica: each product event is applied by one of them. */
const DURABLE = 'license-service-catalog';
const BATCH_SIZE = 64;
const PULL_OPEN_MS = 5_000;

/**
 * Brings the catalog to each product's committed state from the product service's events: the
 * guarantee behind the product service's early notice, which a crash or an outage can lose. Applying
 * an event twice, late or out of order changes nothing (the catalog keeps the newest version, and a
 * retired product stays retired). An event the catalog refuses for its content (a key pair of
 * another organization, or deleted meanwhile) is set aside in the dead-letter stream for an operator.
 */
@Injectable()
export class ProductEventsConsumer implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ProductEventsConsumer.name);
  private readonly consumer: DurableConsumer<ProductEventRecord>;

  constructor(
    bus: BusClient,
    private readonly catalog: CatalogService,
  ) {
    this.consumer = new DurableConsumer<ProductEventRecord>(bus, {
      durable: DURABLE,
      stream: Streams.events,
      filterSubject: PRODUCT_EVENTS_FILTER,
      decode: (message) => decodeMessage(ProductEventRecord, message.data),
      process: async (batch) => {
        const outcomes: Outcome[] = [];
        for (const { value } of batch) outcomes.push(await this.apply(value));
        return outcomes;
      },
      batchSize: BATCH_SIZE,
      batchWaitMs: PULL_OPEN_MS,
    });
  }

  /** Called once the schema is migrated (see app.ts). */
  start(): Promise<void> {
    return this.consumer.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.consumer.stop();
  }

  private async apply(event: ProductEventRecord): Promise<Outcome> {
    try {
      if (event.type === 'product.deleted') await this.catalog.retire(event.org_id, event.data.id);
      else await this.catalog.upsert(event.org_id, event.data);
      return 'ack';
    } catch (error) {
      // Anything but a refusal (PostgreSQL away) fails the batch, which comes back later.
      if (!(error instanceof DomainError) || error.status >= 500) throw error;
      this.logger.warn({
        msg: 'product event refused by the catalog',
        event_id: event.id,
        err: error.message,
      });
      return { deadLetter: `refused by the catalog: ${error.message}` };
    }
  }
}
