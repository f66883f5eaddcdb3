import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Streams } from '@licensing/contracts';
import { BusClient, ensureStream } from '@licensing/shared/messaging';
import { LICENSE_SERVICE_CONFIG, LicenseServiceConfig } from '../config';
import { StreamCheckpointEntity } from './stream-checkpoint.entity';

/** Where the events stream stands: its name on the bus and its first and last sequence numbers. */
export interface StreamPosition {
  name: string;
  firstSeq: number;
  lastSeq: number;
}

/**
 * The events stream's checkpoint in this database (see StreamCheckpointEntity). Once the boot
 * replay has run, every replica writes the stream's last sequence number down every
 * STREAM_CHECKPOINT_MS. Writes race harmlessly: a checkpoint a little behind only makes the next
 * replay read a few more events, each of which it skips.
 */
@Injectable()
export class StreamCheckpoints implements OnApplicationShutdown {
  private readonly logger = new Logger(StreamCheckpoints.name);
  private timer?: NodeJS.Timeout;
  private writing?: Promise<void>;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: BusClient,
    @Inject(LICENSE_SERVICE_CONFIG) private readonly config: LicenseServiceConfig,
  ) {}

  /** The events stream's position now (the stream is created if it does not exist yet). */
  async position(): Promise<StreamPosition> {
    const { name, manager } = await ensureStream(
      this.bus.connection(),
      this.bus.namespace,
      Streams.events,
      this.bus.streamReplicas,
    );
    const { state } = await manager.streams.info(name);
    return { name, firstSeq: state.first_seq, lastSeq: state.last_seq };
  }

  /** The stored checkpoint, or undefined in a database that never wrote one. */
  async read(): Promise<number | undefined> {
    const row = await this.dataSource
      .getRepository(StreamCheckpointEntity)
      .findOneBy({ stream: Streams.events.name });
    return row ? Number(row.seq) : undefined;
  }

  async write(seq: number): Promise<void> {
    await this.dataSource
      .getRepository(StreamCheckpointEntity)
      .upsert({ stream: Streams.events.name, seq: String(seq), updatedAt: new Date() }, ['stream']);
  }

  /** Starts the periodic write; called once the boot replay has run. */
  keepCurrent(): void {
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.writing;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.writing = this.position()
        .then(({ lastSeq }) => this.write(lastSeq))
        .catch((error: unknown) => {
          // NATS or PostgreSQL away: the checkpoint stays where it was, which is safe.
          this.logger.warn({ msg: 'events stream checkpoint not written; retrying', err: String(error) });
        })
        .finally(() => this.schedule());
    }, this.config.STREAM_CHECKPOINT_MS);
    this.timer.unref();
  }
}
