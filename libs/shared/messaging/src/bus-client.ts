import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { ClientNats } from '@nestjs/microservices';
import { JSONCodec, JetStreamClient, NatsConnection, Subscription } from 'nats';
import { TimeoutError, lastValueFrom, timeout } from 'rxjs';
import { DomainError, toDomainError } from '@licensing/shared/errors';
import { requestContext } from '@licensing/shared/logging';
import { BusEnvelope } from './envelope';
import { namespaced } from './subjects';

const codec = JSONCodec();

export interface BusClientOptions {
  natsUrl: string;
  namespace: string;
  timeoutMs: number;
  name: string;
}

/**
 * Request/reply over NATS for the gateway and for service-to-service calls. It wraps the payload
 * with the current request context and turns whatever comes back into either the reply or a
 * DomainError with the status and code the service chose.
 */
@Injectable()
export class BusClient implements OnApplicationShutdown {
  private readonly logger = new Logger(BusClient.name);
  private readonly client: ClientNats;
  private jetstream?: JetStreamClient;

  constructor(private readonly options: BusClientOptions) {
    this.client = new ClientNats({
      servers: options.natsUrl.split(','),
      name: options.name,
      maxReconnectAttempts: -1,
    });
  }

  async connect(): Promise<void> {
    await this.client.connect();
  }

  async send<TReply>(subject: string, data: unknown): Promise<TReply> {
    const current = requestContext.current();
    const envelope: BusEnvelope = {
      ctx: { request_id: current?.request_id ?? randomUUID(), org_id: current?.org_id },
      data,
    };
    const reply$ = this.client
      .send<TReply>(namespaced(this.options.namespace, subject), envelope)
      .pipe(timeout({ first: this.options.timeoutMs }));
    try {
      return await lastValueFrom(reply$);
    } catch (error) {
      throw this.translate(subject, error);
    }
  }

  /**
   * Fire-and-forget broadcast to every subscriber (no queue group): for cache invalidations that
   * every replica must see, not for work that one replica must do.
   */
  publish(subject: string, data: unknown): void {
    this.connection().publish(namespaced(this.options.namespace, subject), codec.encode(data));
  }

  subscribe<T>(subject: string, handler: (data: T) => void): Subscription {
    return this.connection().subscribe(namespaced(this.options.namespace, subject), {
      callback: (error, message) => {
        if (error) return this.logger.error({ subject, err: String(error), msg: 'subscription failed' });
        handler(codec.decode(message.data) as T);
      },
    });
  }

  /** Publishes to JetStream and resolves once the stream has stored it (at-least-once, de-duplicated by `messageId`). */
  async publishDurable(subject: string, payload: string | Uint8Array, messageId: string): Promise<void> {
    const data = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
    this.jetstream ??= this.connection().jetstream();
    await this.jetstream.publish(namespaced(this.options.namespace, subject), data, { msgID: messageId });
  }

  get namespace(): string {
    return this.options.namespace;
  }

  /** The underlying NATS connection, for JetStream consumers. */
  connection(): NatsConnection {
    return this.client.unwrap<NatsConnection>();
  }

  private translate(subject: string, error: unknown): DomainError {
    const known = toDomainError(error);
    if (known) return known;
    if (error instanceof TimeoutError) {
      this.logger.warn({ subject, msg: 'bus request timed out' });
      return new DomainError('unavailable', 'A backing service did not answer in time; retry later');
    }
    this.logger.error({ subject, err: String(error), msg: 'bus request failed' });
    return new DomainError('unavailable', 'A backing service is unavailable; retry later');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
