import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Streams } from '@licensing/contracts';
import { BusClient, ensureStream } from '@licensing/shared/messaging';
import { StreamCheckpointEntity } from './stream-checkpoint.entity';

/** Where the events stream stands: its name on the bus and its first and last sequence numbers. */
interface StreamPosition {
  name: string;
  firstSeq: number;
  lastSeq: number;
}

/**
 * The events stream's checkpoint in this database (see StreamCheckpointEntity), written by each
 * replay. Replicas' writes race harmlessly: a checkpoint a little behind only makes the next
 * replay read a few more events, each of which it skips.
 */
@Injectable()
export class StreamCheckpoints {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: BusClient,
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
}
