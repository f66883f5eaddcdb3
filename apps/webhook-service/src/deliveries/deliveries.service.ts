import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  DeliveryDetailView,
  DeliveryListView,
  DeliveryView,
  ListDeliveriesMessage,
  pageOf,
} from '@licensing/contracts';
import { pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { EndpointEntity } from '../endpoints/endpoint.entity';
import { DeliveryEntity } from './delivery.entity';
import { DeliveryWorker } from './delivery.worker';
import { WebhookEventEntity } from './webhook-event.entity';

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

function toDeliveryView(delivery: DeliveryEntity): DeliveryView {
  return {
    id: delivery.id,
    webhook_id: delivery.endpointId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    next_attempt_at: delivery.status === 'pending' ? iso(delivery.nextAttemptAt) : null,
    last_attempt_at: iso(delivery.lastAttemptAt),
    last_duration_ms: delivery.lastDurationMs,
    created_at: delivery.createdAt.toISOString(),
    delivered_at: iso(delivery.deliveredAt),
  };
}

/** The delivery log of an endpoint, and redelivery on request. */
@Injectable()
export class DeliveriesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly worker: DeliveryWorker,
  ) {}

  async list(orgId: string, query: ListDeliveriesMessage): Promise<DeliveryListView> {
    const exists = await this.dataSource.getRepository(EndpointEntity).existsBy({ id: query.id, orgId });
    if (!exists) throw DomainError.notFound('Webhook', query.id);
    const [deliveries, total] = await this.dataSource.getRepository(DeliveryEntity).findAndCount({
      where: { endpointId: query.id, orgId, ...(query.status ? { status: query.status } : {}) },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...pageWindow(pageOf(query)),
    });
    return { deliveries: deliveries.map(toDeliveryView), total };
  }

  /** One delivery, with the stored body of its event: the exact bytes every attempt sends. */
  async get(orgId: string, id: string): Promise<DeliveryDetailView> {
    const delivery = await this.dataSource.getRepository(DeliveryEntity).findOneBy({ id, orgId });
    if (!delivery) throw DomainError.notFound('Webhook delivery', id);
    const event = await this.dataSource
      .getRepository(WebhookEventEntity)
      .findOneByOrFail({ id: delivery.eventId, orgId });
    return { ...toDeliveryView(delivery), payload: JSON.parse(event.payload) as Record<string, unknown> };
  }

  /**
   * Attempts a delivery again at once, whatever became of it, with a fresh budget of attempts; the
   * receiver gets the same event id (and so can recognize a repeat).
   */
  async redeliver(orgId: string, id: string): Promise<DeliveryView> {
    const delivery = await this.dataSource.transaction(async (manager) => {
      const found = await manager.findOne(DeliveryEntity, {
        where: { id, orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!found) throw DomainError.notFound('Webhook delivery', id);
      const endpoint = await manager.findOneByOrFail(EndpointEntity, { id: found.endpointId });
      if (!endpoint.enabled) {
        throw DomainError.conflict(`Webhook ${endpoint.id} is disabled; enable it first`);
      }
      await manager.query(
        `UPDATE ${manager.connection.getMetadata(DeliveryEntity).tablePath}
            SET status = 'pending', round_attempts = 0, next_attempt_at = now(), delivered_at = NULL
          WHERE id = $1`,
        [id],
      );
      return manager.findOneByOrFail(DeliveryEntity, { id });
    });
    this.worker.wake();
    return toDeliveryView(delivery);
  }
}
