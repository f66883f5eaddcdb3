import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { TIMESTAMP } from '@licensing/shared/database';
import { ActivationEntity } from './activation.entity';

/**
 * A process running on an activation's machine. One row per (activation, pid); it goes with its
 * activation. A row past `expires_at` plus its policy's grace holds no slot and is swept.
 */
@Entity({ name: 'processes' })
@Unique('uq_processes_activation_pid', ['activationId', 'pid'])
@Index('ix_processes_activation_created', ['activationId', 'createdAt', 'id'])
@Index('ix_processes_expires', ['expiresAt'])
export class ProcessEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('uuid', { name: 'activation_id' })
  activationId!: string;

  @ManyToOne(() => ActivationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'activation_id', foreignKeyConstraintName: 'fk_processes_activation' })
  activation?: ActivationEntity;

  /** Read back as a number: a pid fits in 32 bits, and the column is a bigint only for unsigned ones. */
  @Column('bigint', {
    transformer: {
      to: (value: number) => value,
      from: (value: string | null) => (value === null ? null : Number(value)),
    },
  })
  pid!: number;

  @Column({ ...TIMESTAMP, name: 'created_at' })
  createdAt!: Date;

  @Column({ ...TIMESTAMP, name: 'last_heartbeat_at' })
  lastHeartbeatAt!: Date;

  @Column({ ...TIMESTAMP, name: 'expires_at', nullable: true })
  expiresAt!: Date | null;
}
