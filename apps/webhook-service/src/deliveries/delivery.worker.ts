import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { MasterKeyVault } from '@licensing/shared/crypto';
import { Metrics } from '@licensing/shared/metrics';
import { WEBHOOK_CONFIG, WebhookServiceConfig } from '../config';
import { RetrySchedule, retryDelayMs } from '../delivery/backoff';
import { Resolver } from '../delivery/destination';
import { signatureHeader } from '../delivery/signature';
import { sendWebhook } from '../delivery/webhook-sender';
import { ClaimedDelivery, DeliveriesRepository } from './deliveries.repository';

const delivered = Metrics.webhookDeliveries.labels('delivered');
const failed = Metrics.webhookDeliveries.labels('failed');

const USER_AGENT = 'Licensing-Platform-Webhooks/1.0';
/** Beyond the attempt's own deadline, how long (at most) a claim stays with the worker that made it. */
const LEASE_MARGIN_MS = 5_000;
const ERROR_BACKOFF_MS = 1_000;

/** A DNS resolver to use instead of the system's (tests map host names of their own). */
export const WEBHOOK_RESOLVER = Symbol('WebhookResolver');

/**
 * Delivers due webhooks from the queue in PostgreSQL. Up to WEBHOOK_CONCURRENCY attempts run at
 * once in this process, and at most WEBHOOK_ENDPOINT_CONCURRENCY of them for any one endpoint: a
 * receiver that hangs holds only its own slots until its timeout, and the others keep flowing.
 * The worker is woken by new deliveries and finished attempts, and polls for due retries.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryWorker.name);
  private readonly schedule: RetrySchedule;
  /** Attempts in flight per endpoint, in this process. */
  private readonly inFlight = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  private running = false;
  private loop?: Promise<void>;
  private woken = false;
  private wakeUp?: () => void;

  constructor(
    private readonly queue: DeliveriesRepository,
    private readonly vault: MasterKeyVault,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookServiceConfig,
    @Inject(WEBHOOK_RESOLVER) private readonly resolve: Resolver | undefined,
  ) {
    this.schedule = {
      baseMs: config.WEBHOOK_RETRY_BASE_MS,
      maxMs: config.WEBHOOK_RETRY_MAX_MS,
      maxAttempts: config.WEBHOOK_MAX_ATTEMPTS,
    };
  }

  /** Called once the schema is migrated (app.ts). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Something is due now (a new delivery, a redelivery, a freed slot): look at once. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops claiming, then lets the attempts in flight finish and record their outcome. */
  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    await Promise.all([...this.attempts]);
  }

  private get total(): number {
    return this.attempts.size;
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      let pause = this.config.WEBHOOK_POLL_MS;
      try {
        const claimed = await this.claim();
        // A full claim may leave more due rows behind: look again at once.
        if (claimed > 0 && this.total < this.config.WEBHOOK_CONCURRENCY) pause = 0;
      } catch (error) {
        this.logger.warn({ msg: 'could not claim deliveries; retrying', err: String(error) });
        pause = ERROR_BACKOFF_MS;
      }
      if (pause > 0 && !this.woken) await this.sleep(pause);
    }
  }

  private async claim(): Promise<number> {
    const free = this.config.WEBHOOK_CONCURRENCY - this.total;
    if (free <= 0) return 0;
    const limit = this.config.WEBHOOK_ENDPOINT_CONCURRENCY;
    const busy = [...this.inFlight].filter(([, count]) => count >= limit).map(([id]) => id);
    const claimed = await this.queue.claim({
      limit: free,
      maxPerEndpoint: limit,
      perEndpoint: (endpointId) => limit - (this.inFlight.get(endpointId) ?? 0),
      busy,
      leaseMs: this.config.WEBHOOK_TIMEOUT_MS + Math.min(LEASE_MARGIN_MS, this.config.WEBHOOK_TIMEOUT_MS),
    });
    for (const delivery of claimed) {
      this.inFlight.set(delivery.endpoint_id, (this.inFlight.get(delivery.endpoint_id) ?? 0) + 1);
      const attempt: Promise<void> = this.attempt(delivery)
        .catch((error: unknown) => {
          // Its lease ends and it is attempted again.
          this.logger.warn({
            msg: 'attempt failed unexpectedly',
            delivery_id: delivery.id,
            err: String(error),
          });
        })
        .finally(() => {
          this.attempts.delete(attempt);
          const left = (this.inFlight.get(delivery.endpoint_id) ?? 1) - 1;
          if (left > 0) this.inFlight.set(delivery.endpoint_id, left);
          else this.inFlight.delete(delivery.endpoint_id);
          this.wake();
        });
      this.attempts.add(attempt);
    }
    return claimed.length;
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const secrets = [
      this.vault.open(delivery.endpoint_id, {
        ciphertext: delivery.secret_ciphertext,
        version: delivery.secret_key_version,
      }),
    ];
    if (
      delivery.previous_secret_valid &&
      delivery.previous_secret_ciphertext &&
      delivery.previous_secret_key_version
    ) {
      secrets.push(
        this.vault.open(delivery.endpoint_id, {
          ciphertext: delivery.previous_secret_ciphertext,
          version: delivery.previous_secret_key_version,
        }),
      );
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const result = await sendWebhook(
      {
        url: delivery.url,
        body: delivery.payload,
        timeoutMs: this.config.WEBHOOK_TIMEOUT_MS,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'licensing-event-id': delivery.event_id,
          'licensing-event-type': delivery.event_type,
          'licensing-delivery-id': delivery.id,
          'licensing-delivery-attempt': String(delivery.attempts),
          'licensing-signature': signatureHeader(secrets, timestamp, delivery.payload),
        },
      },
      { allowPrivateNetworks: this.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS, resolve: this.resolve },
    );
    (result.delivered ? delivered : failed).inc();
    const retryInMs = result.delivered ? undefined : retryDelayMs(delivery.round_attempts, this.schedule);
    const log = {
      delivery_id: delivery.id,
      endpoint_id: delivery.endpoint_id,
      org_id: delivery.org_id,
      event_id: delivery.event_id,
      attempt: delivery.attempts,
      status_code: result.statusCode,
      duration_ms: result.durationMs,
    };
    if (result.delivered) this.logger.debug({ msg: 'webhook delivered', ...log });
    else
      this.logger.log({
        msg: 'webhook attempt failed',
        ...log,
        err: result.error,
        retry_in_ms: retryInMs ?? null,
      });
    try {
      await this.queue.record({
        id: delivery.id,
        endpointId: delivery.endpoint_id,
        attempts: delivery.attempts,
        delivered: result.delivered,
        statusCode: result.statusCode,
        error: result.error,
        durationMs: result.durationMs,
        retryInMs,
      });
    } catch (error) {
      // The lease ends and the delivery is attempted again: a duplicate, never a loss.
      this.logger.warn({ msg: 'could not record an attempt', ...log, err: String(error) });
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
  }
}
