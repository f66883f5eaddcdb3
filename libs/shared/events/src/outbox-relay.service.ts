import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Streams } from '@licensing/contracts';
import { BusClient, ensureStream } from '@licensing/shared/messaging';
import { OutboxEventEntity } from './outbox-event.entity';

const BATCH_SIZE = 100;
const IDLE_POLL_MS = 100;
const MAX_BACKOFF_MS = 5_000;

/**
 * Drains the outbox to JetStream, oldest first. Replicas share the work: each batch is claimed with
 * FOR UPDATE SKIP LOCKED and deleted in the same transaction once JetStream has acknowledged every
 * event of it. If the process dies between the acknowledgement and the commit, the batch is
 * published again and JetStream drops the copies (the event id is the Nats-Msg-Id).
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: BusClient,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Both streams the outbox feeds must exist before its first publication.
    await ensureStream(this.bus.connection(), this.bus.namespace, Streams.events);
    await ensureStream(this.bus.connection(), this.bus.namespace, Streams.audit);
    this.running = true;
    this.loop = this.run();
  }

  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  /** Publishes everything pending now; answers how many events went out. Used by the loop and by tests. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const published = await this.publishBatch();
      total += published;
      if (published < BATCH_SIZE) return total;
    }
  }

  private async run(): Promise<void> {
    let backoff = IDLE_POLL_MS;
    while (this.running) {
      try {
        await this.drain();
        backoff = IDLE_POLL_MS;
      } catch (error) {
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        this.logger.warn({ msg: 'outbox relay failed; retrying', err: String(error), retry_in_ms: backoff });
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, backoff);
      });
    }
  }

  private publishBatch(): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const rows = await manager
        .getRepository(OutboxEventEntity)
        .createQueryBuilder('e')
        .orderBy('e.seq', 'ASC')
        .limit(BATCH_SIZE)
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked')
        .getMany();
      for (const row of rows) await this.bus.publishDurable(row.subject, row.payload, row.id);
      if (rows.length > 0)
        await manager.delete(
          OutboxEventEntity,
          rows.map((row) => row.seq),
        );
      return rows.length;
    });
  }
}
