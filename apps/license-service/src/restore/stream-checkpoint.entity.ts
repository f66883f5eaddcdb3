import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';

/**
 * How far a JetStream stream reached when this database last looked: every event of that stream
 * up to `seq` describes a change this database had already committed. A backup carries its
 * checkpoint, so a restored database knows which events came after it.
 */
@Entity({ name: 'stream_checkpoints' })
export class StreamCheckpointEntity {
  /** The stream's name without the bus namespace (`LICENSING_EVENTS`). */
  @PrimaryColumn('varchar', { length: 64 })
  stream!: string;

  /** A bigint, which pg returns as a string. */
  @Column('bigint')
  seq!: string;

  @Column({ ...TIMESTAMP, name: 'updated_at' })
  updatedAt!: Date;
}
