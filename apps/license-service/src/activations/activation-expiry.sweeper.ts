import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, LessThanOrEqual } from 'typeorm';
import { ExclusiveJob } from '@licensing/shared/database';
import { LICENSE_SERVICE_CONFIG, LicenseServiceConfig } from '../config';
import { ActivationGrantEntity } from './activation-grant.entity';
import { ActivationEntity } from './activation.entity';
import { ActivationsService } from './activations.service';
import { ACTIVATION_WINDOW_MS } from './seats';

/**
 * Removes activations whose heartbeat deadline has passed and publishes activation.expired. The
 * seat is already free at the deadline (a lapsed activation is not counted); this makes the
 * removal visible in lists and to subscribers within ACTIVATION_SWEEP_MS. It also forgets the
 * grants older than the activation cap's 24 h window, which no longer count.
 */
@Injectable()
export class ActivationExpirySweeper extends ExclusiveJob {
  protected readonly name = 'activation-expiry';
  protected readonly intervalMs: number;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(LICENSE_SERVICE_CONFIG) config: LicenseServiceConfig,
    private readonly activations: ActivationsService,
  ) {
    super(dataSource);
    this.intervalMs = config.ACTIVATION_SWEEP_MS;
  }

  protected async pass(manager: EntityManager, now: Date): Promise<number> {
    const lapsed = await manager.find(ActivationEntity, {
      where: { expiresAt: LessThanOrEqual(now) },
      order: { expiresAt: 'ASC' },
      take: this.batchSize,
      lock: { mode: 'pessimistic_write', onLocked: 'skip_locked' },
    });
    for (const activation of lapsed) await this.activations.expire(manager, activation, now);
    await manager.delete(ActivationGrantEntity, {
      createdAt: LessThanOrEqual(new Date(now.getTime() - ACTIVATION_WINDOW_MS)),
    });
    return lapsed.length;
  }
}
