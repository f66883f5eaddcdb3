import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import {
  CreateWebhookDto,
  MessageView,
  PageQueryDto,
  UpdateWebhookDto,
  WEBHOOK_TEST_EVENT,
  WebhookCreatedView,
  WebhookListView,
  WebhookSecretView,
  WebhookTestView,
  WebhookView,
  pageOf,
} from '@licensing/contracts';
import { MasterKeyVault } from '@licensing/shared/crypto';
import { pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { auditChanges, recordAudit } from '@licensing/shared/events';
import { WEBHOOK_CONFIG, WebhookServiceConfig } from '../config';
import { DeliveriesRepository, storedEvent } from '../deliveries/deliveries.repository';
import { DeliveryWorker, WEBHOOK_RESOLVER } from '../deliveries/delivery.worker';
import { DestinationRefused, Resolver, resolveDestination, systemResolver } from '../delivery/destination';
import { generateSecret } from '../delivery/signature';
import { EndpointEntity } from './endpoint.entity';
import { toWebhookView } from './endpoint.mapper';

/** How long a rotated-out secret still signs deliveries (a second `v1=`). */
const PREVIOUS_SECRET_GRACE_MS = 24 * 3_600_000;
/** A host name that takes longer to resolve is accepted at creation and checked at delivery. */
const CREATION_DNS_TIMEOUT_MS = 2_000;

/** Webhook endpoints of an organization: their URLs, subscriptions and sealed secrets. */
@Injectable()
export class EndpointsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly vault: MasterKeyVault,
    private readonly queue: DeliveriesRepository,
    private readonly worker: DeliveryWorker,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookServiceConfig,
    @Inject(WEBHOOK_RESOLVER) private readonly resolve: Resolver | undefined,
  ) {}

  async create(orgId: string, dto: CreateWebhookDto): Promise<WebhookCreatedView> {
    await this.checkDestination(dto.url);
    const id = randomUUID();
    const secret = generateSecret();
    const sealed = this.vault.seal(id, secret);
    const now = new Date();
    const endpoint = Object.assign(new EndpointEntity(), {
      id,
      orgId,
      url: dto.url,
      events: dto.events,
      description: dto.description ?? null,
      enabled: true,
      disabledReason: null,
      secretCiphertext: sealed.ciphertext,
      secretKeyVersion: sealed.version,
      previousSecretCiphertext: null,
      previousSecretKeyVersion: null,
      previousSecretExpiresAt: null,
      failingSince: null,
      createdAt: now,
      updatedAt: now,
    });
    const view = toWebhookView(endpoint);
    await this.dataSource.transaction(async (manager) => {
      await manager.insert(EndpointEntity, endpoint);
      await recordAudit(manager, {
        orgId,
        action: 'created',
        resourceType: 'webhook',
        resourceId: id,
        changes: auditChanges(null, view),
        occurredAt: now,
      });
    });
    return { ...view, secret };
  }

  async list(orgId: string, query: PageQueryDto): Promise<WebhookListView> {
    const [endpoints, total] = await this.dataSource.getRepository(EndpointEntity).findAndCount({
      where: { orgId },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...pageWindow(pageOf(query)),
    });
    return { webhooks: endpoints.map(toWebhookView), total };
  }

  async get(orgId: string, id: string): Promise<WebhookView> {
    return toWebhookView(await this.find(this.dataSource.manager, orgId, id));
  }

  async update(orgId: string, id: string, changes: UpdateWebhookDto): Promise<WebhookView> {
    if (changes.url !== undefined) await this.checkDestination(changes.url);
    return this.dataSource.transaction(async (manager) => {
      const endpoint = await this.find(manager, orgId, id, true);
      const before = toWebhookView(endpoint);
      if (changes.url !== undefined) endpoint.url = changes.url;
      if (changes.events !== undefined) endpoint.events = changes.events;
      if (changes.description !== undefined) endpoint.description = changes.description;
      if (changes.enabled !== undefined && changes.enabled !== endpoint.enabled) {
        endpoint.enabled = changes.enabled;
        endpoint.disabledReason = null;
        // Re-enabled: the failure clock starts again, so it is not disabled again at once.
        endpoint.failingSince = null;
      }
      endpoint.updatedAt = new Date();
      await manager.update(
        EndpointEntity,
        { id },
        {
          url: endpoint.url,
          events: endpoint.events,
          description: endpoint.description,
          enabled: endpoint.enabled,
          disabledReason: endpoint.disabledReason,
          failingSince: endpoint.failingSince,
          updatedAt: endpoint.updatedAt,
        },
      );
      const after = toWebhookView(endpoint);
      const diff = auditChanges(before, after);
      delete diff.updated_at;
      if (Object.keys(diff).length > 0) {
        await recordAudit(manager, {
          orgId,
          action: 'updated',
          resourceType: 'webhook',
          resourceId: id,
          changes: diff,
          occurredAt: endpoint.updatedAt,
        });
      }
      if (endpoint.enabled) this.worker.wake();
      return after;
    });
  }

  /** Deletes the endpoint and its delivery log; deliveries in flight finish, none is attempted again. */
  async delete(orgId: string, id: string): Promise<MessageView> {
    await this.dataSource.transaction(async (manager) => {
      const endpoint = await this.find(manager, orgId, id, true);
      await manager.delete(EndpointEntity, { id });
      await recordAudit(manager, {
        orgId,
        action: 'deleted',
        resourceType: 'webhook',
        resourceId: id,
        changes: auditChanges(toWebhookView(endpoint), null),
      });
    });
    return { message: `Webhook ${id} deleted` };
  }

  /**
   * A new secret, shown once. The previous one keeps signing (a second `v1=`) for 24 hours, so a
   * receiver can switch without missing a delivery.
   */
  async rotateSecret(orgId: string, id: string): Promise<WebhookSecretView> {
    const secret = generateSecret();
    const sealed = this.vault.seal(id, secret);
    const now = new Date();
    const expiresAt = new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS);
    await this.dataSource.transaction(async (manager) => {
      await this.find(manager, orgId, id, true);
      const current = await manager
        .getRepository(EndpointEntity)
        .createQueryBuilder('e')
        .addSelect(['e.secretCiphertext', 'e.secretKeyVersion'])
        .where('e.id = :id', { id })
        .getOneOrFail();
      await manager.update(
        EndpointEntity,
        { id },
        {
          previousSecretCiphertext: current.secretCiphertext,
          previousSecretKeyVersion: current.secretKeyVersion,
          previousSecretExpiresAt: expiresAt,
          secretCiphertext: sealed.ciphertext,
          secretKeyVersion: sealed.version,
          updatedAt: now,
        },
      );
      await recordAudit(manager, {
        orgId,
        action: 'rotated',
        resourceType: 'webhook',
        resourceId: id,
        changes: { previous_secret_expires_at: { from: null, to: expiresAt.toISOString() } },
        occurredAt: now,
      });
    });
    return { secret, previous_secret_expires_at: expiresAt.toISOString() };
  }

  /** Queues a `webhook.test` event for this one endpoint, due at once, through the usual delivery path. */
  async test(orgId: string, id: string): Promise<WebhookTestView> {
    const eventId = randomUUID();
    const deliveryId = randomUUID();
    await this.dataSource.transaction(async (manager) => {
      const endpoint = await this.find(manager, orgId, id);
      if (!endpoint.enabled) throw DomainError.conflict(`Webhook ${id} is disabled; enable it first`);
      const occurredAt = new Date().toISOString();
      const event = {
        id: eventId,
        type: WEBHOOK_TEST_EVENT,
        org_id: orgId,
        occurred_at: occurredAt,
        data: toWebhookView(endpoint),
      };
      await this.queue.insertEvents(manager, [storedEvent(event)]);
      await this.queue.insertDeliveries(manager, [
        { id: deliveryId, endpoint_id: id, event_id: eventId, org_id: orgId, event_type: event.type },
      ]);
    });
    this.worker.wake();
    return { message: 'Test event queued for delivery', event_id: eventId, delivery_id: deliveryId };
  }

  private async find(
    manager: EntityManager,
    orgId: string,
    id: string,
    lock = false,
  ): Promise<EndpointEntity> {
    const endpoint = await manager.findOne(EndpointEntity, {
      where: { id, orgId },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!endpoint) throw DomainError.notFound('Webhook', id);
    return endpoint;
  }

  /**
   * Refuses, as a 400 on `url`, a destination no delivery could ever reach under the platform's
   * policy: plain http or a private address while private networks are not allowed. A host name
   * that does not resolve now is accepted (it may later); every delivery checks again.
   */
  private async checkDestination(url: string): Promise<void> {
    try {
      await resolveDestination(url, {
        allowPrivateNetworks: this.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
        resolve: withTimeout(this.resolve, CREATION_DNS_TIMEOUT_MS),
      });
    } catch (error) {
      if (!(error instanceof DestinationRefused)) throw error;
      if (error.reason === 'dns') return;
      throw DomainError.validation([{ field: 'url', message: `url is not allowed: ${error.message}` }]);
    }
  }
}

function withTimeout(resolve: Resolver | undefined, ms: number): Resolver {
  return async (hostname) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })), ms);
    });
    try {
      return await Promise.race([(resolve ?? systemResolver)(hostname), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}
