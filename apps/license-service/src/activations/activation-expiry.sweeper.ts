import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, LessThanOrEqual } from 'typeorm';
import { ExclusiveJob } from '@licensing/shared/database';
import { LICENSE_SERVICE_CONFIG, LicenseServiceConfig } from '../config';
import { CredentialsService } from '../credentials/credentials.service';
import { ActivationGrantEntity } from './activation-grant.entity';
import { ActivationEntity } from './activation.entity';
import { ActivationsService } from './activations.service';
import { ACTIVATION_WINDOW_MS } from './seats';

/**
 * Removes activations whose heartbeat deadline has passed and publishes activation.expired. The
 * seat is already free at the deadline (a lapsed activation is not counted); this makes the
 * removal visible in lists and to subscribers within ACTIVATION_SWEEP_MS. It also forgets the
 * grants older than the activation cap's 24 h window, which no longer count. Once a pass has
 * committed, the machine tokens of the activations it removed are evicted from every gateway.
 */
@Injectable()
export class ActivationExpirySweeper extends ExclusiveJob {
  protected readonly name = 'activation-expiry';
  protected readonly intervalMs: number;
  /** The machine tokens of the activations the running pass removed. */
  private ended: string[] = [];

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(LICENSE_SERVICE_CONFIG) config: LicenseServiceConfig,
    private readonly activations: ActivationsService,
    private readonly credentials: CredentialsService,
  ) {
    super(dataSource);
    this.intervalMs = config.ACTIVATION_SWEEP_MS;
  }

  override async run(): Promise<number> {
    this.ended = [];
    const handled = await super.run();
    for (const tokenHash of this.ended) this.credentials.tokenRevoked(tokenHash);
    return handled;
  }

  protected async pass(manager: EntityManager, now: Date): Promise<number> {
    const lapsed = await manager.find(ActivationEntity, {
      where: { expiresAt: LessThanOrEqual(now) },
      order: { expiresAt: 'ASC' },
      take: this.batchSize,
      lock: { mode: 'pessimistic_write', onLocked: 'skip_locked' },
    });
    for (const activation of lapsed) await this.activations.expire(manager, activation, now);
    this.ended = lapsed.flatMap((activation) => (activation.tokenHash ? [activation.tokenHash] : []));
    await manager.delete(ActivationGrantEntity, {
      createdAt: LessThanOrEqual(new Date(now.getTime() - ACTIVATION_WINDOW_MS)),
    });
    return lapsed.length;
  }
}
