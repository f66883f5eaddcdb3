import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ExclusiveJob } from '@licensing/shared/database';
import { recordEvent } from '@licensing/shared/events';
import { WEBHOOK_CONFIG, WebhookServiceConfig } from '../config';
import { EndpointEntity, tableOf } from './endpoint.entity';
import { toWebhookView } from './endpoint.mapper';

const DISABLED_FOR_FAILURES = 'Every delivery attempt failed for too long';

/**
 * Disables the endpoints whose every attempt has failed for WEBHOOK_DISABLE_AFTER_MS (no success
 * since `failing_since`), and publishes `webhook.disabled` for each through the outbox, in the
 * same transaction. Their pending deliveries wait; re-enabling the endpoint resumes them.
 */
@Injectable()
export class EndpointDisableSweeper extends ExclusiveJob {
  protected readonly name = 'webhook-endpoint-disable';
  protected readonly intervalMs: number;
  private readonly disableAfterMs: number;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(WEBHOOK_CONFIG) config: WebhookServiceConfig,
  ) {
    super(dataSource);
    this.intervalMs = config.WEBHOOK_SWEEP_MS;
    this.disableAfterMs = config.WEBHOOK_DISABLE_AFTER_MS;
  }

  protected async pass(manager: EntityManager, now: Date): Promise<number> {
    const [rows] = await manager.query<[Array<{ id: string }>, number]>(
      `UPDATE ${tableOf(this.dataSource, EndpointEntity)}
          SET enabled = false, disabled_reason = $3, updated_at = $1
        WHERE id IN (SELECT id FROM ${tableOf(this.dataSource, EndpointEntity)}
                      WHERE enabled AND failing_since <= $2
                      LIMIT ${this.batchSize} FOR UPDATE SKIP LOCKED)
    RETURNING id`,
      [now, new Date(now.getTime() - this.disableAfterMs), DISABLED_FOR_FAILURES],
    );
    for (const { id } of rows) {
      const endpoint = await manager.findOneByOrFail(EndpointEntity, { id });
      await recordEvent(manager, {
        type: 'webhook.disabled',
        orgId: endpoint.orgId,
        data: toWebhookView(endpoint),
        occurredAt: now,
      });
    }
    return rows.length;
  }
}
