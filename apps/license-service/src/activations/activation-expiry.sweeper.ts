import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, LessThanOrEqual } from 'typeorm';
import { ExclusiveJob } from '@licensing/shared/database';
import { LICENSE_SERVICE_CONFIG, LicenseServiceConfig } from '../config';
import { CredentialsService } from '../credentials/credentials.service';
import { ActivationGrantEntity } from './activation-grant.entity';
import { ActivationEntity } from './activation.entity';
import { ActivationsService } from './activations.service';
import { ProcessEntity } from './process.entity';
import { LicenseEntity } from '../licenses/license.entity';
import { PolicyEntity } from '../policies/policy.entity';
import { ACTIVATION_WINDOW_MS } from './seats';

/**
 * Removes activations whose heartbeat deadline has passed and publishes activation.expired. The
 * seat is already free at the deadline (a lapsed activation is not counted); this makes the
 * removal visible in lists and to subscribers within ACTIVATION_SWEEP_MS. A policy's grace keeps
 * a lapsed activation (and its seat) that much longer. Lapsed processes go the same way. It also forgets the
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
    // Past the deadline and the policy's grace (none without a policy): holdsPlace's rule.
    const lapsed = await manager
      .createQueryBuilder(ActivationEntity, 'a')
      .innerJoin(LicenseEntity, 'l', 'l.id = a.license_id')
      .leftJoin(PolicyEntity, 'p', 'p.id = l.policy_id')
      .where('a.expires_at <= :now', { now })
      .andWhere('a.expires_at + make_interval(secs => coalesce(p.heartbeat_grace_seconds, 0)) <= :now')
      .orderBy('a.expires_at', 'ASC')
      .limit(this.batchSize)
      .setLock('pessimistic_write', undefined, ['a'])
      .setOnLocked('skip_locked')
      .getMany();
    for (const activation of lapsed) await this.activations.expire(manager, activation, now);
    this.ended = lapsed.flatMap((activation) => (activation.tokenHash ? [activation.tokenHash] : []));
    await sweepProcesses(manager, now);
    await manager.delete(ActivationGrantEntity, {
      createdAt: LessThanOrEqual(new Date(now.getTime() - ACTIVATION_WINDOW_MS)),
    });
    return lapsed.length;
  }
}

/** Removes the processes past their deadline and their policy's grace; they hold no slot already. */
async function sweepProcesses(manager: EntityManager, now: Date): Promise<void> {
  const table = (entity: new () => object) => manager.getRepository(entity).metadata.tablePath;
  await manager.query(
    `DELETE FROM ${table(ProcessEntity)} pr
      USING ${table(ActivationEntity)} a
            JOIN ${table(LicenseEntity)} l ON l.id = a.license_id
            LEFT JOIN ${table(PolicyEntity)} p ON p.id = l.policy_id
      WHERE pr.activation_id = a.id AND pr.expires_at <= $1
        AND pr.expires_at + make_interval(secs => coalesce(p.heartbeat_grace_seconds, 0)) <= $1`,
    [now],
  );
}
