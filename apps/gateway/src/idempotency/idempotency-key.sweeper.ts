import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ExclusiveJob } from '@licensing/shared/database';
import { IdempotencyKeyEntity } from './idempotency-key.entity';

/** Removes idempotency keys past their expiry (claims abandoned for as long included); one replica at a time. */
@Injectable()
export class IdempotencyKeySweeper extends ExclusiveJob {
  protected readonly name = 'idempotency-key-expiry';
  protected readonly intervalMs = 60_000;

  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  protected async pass(manager: EntityManager, now: Date): Promise<number> {
    const { affected } = await manager
      .createQueryBuilder()
      .delete()
      .from(IdempotencyKeyEntity)
      .where(
        `id IN (SELECT id FROM identity.idempotency_keys WHERE expires_at <= :now
                 ORDER BY expires_at LIMIT :limit FOR UPDATE SKIP LOCKED)`,
        { now, limit: this.batchSize },
      )
      .execute();
    return affected ?? 0;
  }
}
