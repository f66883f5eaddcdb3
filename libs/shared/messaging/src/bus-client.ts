import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import {
  ErrorCode,
  Events,
  JSONCodec,
  MsgHdrs,
  NatsConnection,
  NatsError,
  Subscription,
  connect,
  headers as natsHeaders,
} from 'nats';
import { BroadcastDefinition, MessageDefinition } from '@licensing/contracts';
import { DomainError, toDomainError } from '@licensing/shared/errors';
import { requestContext } from '@licensing/shared/logging';
import { Metrics } from '@licensing/shared/metrics';
import { SpanKind, tracing } from '@licensing/shared/tracing';
import { inSpan, messagingAttributes, subjectFamily, traceHeaders } from './bus-tracing';
import { BusEnvelope } from './envelope';
import { ReplyInbox } from './reply-inbox';
import { JsonText, responseTextOf } from './reply-wire';
import { namespaced } from './subjects';

const codec = JSONCodec();
const encoder = new TextEncoder();

/** A reply of Nest's NATS transport. */
interface ReplyPacket<T> {
  id: string;
  response?: T;
  err?: unknown;
  isDisposed?: boolean;
}

export interface BusClientOptions {
  natsUrl: string;
  namespace: string;
  timeoutMs: number;
  name: string;
  /** Replicas of the JetStream streams this process creates (JETSTREAM_REPLICAS); 1 by default. */
  streamReplicas?: number;
}

/**
 * Request/reply over NATS for the gateway and for service-to-service calls. It wraps the payload
 * with the current request context and turns whatever comes back into either the reply or a
 * DomainError with the status and code the service chose.
 */
@Injectable()
export class BusClient implements OnApplicationShutdown {
  private readonly logger = new Logger(BusClient.name);
  private nats?: NatsConnection;
  private connected = false;
  private inbox?: ReplyInbox;
  /** The packet id Nest's wire format wants: echoed back, never read (the reply subject is the key). */
  private packets = 0;

  constructor(private readonly options: BusClientOptions) {}

  /** Connects once; afterwards nats.js reconnects by itself, for ever, across NATS restarts. */
  async connect(): Promise<void> {
    if (this.nats) return;
    this.nats = await connect({
      servers: this.options.natsUrl.split(','),
      name: this.options.name,
      maxReconnectAttempts: -1,
      // nats.js builds an Error for every request() up front, for a stack trace should it fail;
      // JetStream publishes (every sync, every relayed event) are request()s.
      noAsyncTraces: true,
    });
    this.inbox = new ReplyInbox(this.nats, this.options.timeoutMs);
    this.connected = true;
    void this.followStatus(this.nats);
  }

  /**
   * While the connection is down nats.js buffers a request until it reconnects or times out, so a
   * NATS outage would cost every caller the whole bus timeout. Knowing the connection is down, the
   * client answers `unavailable` at once instead.
   */
  private async followStatus(nats: NatsConnection): Promise<void> {
    for await (const status of nats.status()) {
      if (status.type === Events.Disconnect) {
        this.connected = false;
        this.logger.warn({ msg: 'NATS connection lost; bus requests fail at once until it is back' });
      } else if (status.type === Events.Reconnect) {
        this.connected = true;
        this.logger.log({ msg: 'NATS connection restored' });
      }
    }
  }

  /**
   * One request/reply. It speaks the wire format of Nest's NATS transport (`{pattern, data, id}`
   * out, `{id, response | err}` back), so the services keep plain @MessagePattern handlers, but it
   * goes through one shared reply subscription for all requests (`ReplyInbox`), where Nest's
   * ClientNats subscribes and unsubscribes for every single one. A subject nobody serves fails at
   * once (no responders) instead of waiting for the timeout.
   */
  async send<Request, Reply>(message: MessageDefinition<Request, Reply>, data: Request): Promise<Reply> {
    return this.exchange<Request, Reply, Reply>(message, data, parsedReply);
  }

  /**
   * `send`, answering the reply's JSON text as received instead of the parsed value: for a gateway
   * route that hands the service's answer to its client unchanged, with no parse and no second
   * serialization (both were a tenth of the gateway's CPU on check-revocation).
   */
  forward<Request, Reply>(
    message: MessageDefinition<Request, Reply>,
    data: Request,
  ): Promise<JsonText<Reply>> {
    return this.exchange<Request, Reply, JsonText<Reply>>(message, data, replyText);
  }

  private async exchange<Request, Reply, Answer>(
    message: MessageDefinition<Request, Reply>,
    data: Request,
    read: ReplyReader<Answer>,
  ): Promise<Answer> {
    const started = performance.now();
    try {
      const reply = await (tracing.enabled
        ? this.tracedRequest(message, data, read)
        : this.request(message, data, read));
      observeBusRequest(message.subject, 'ok', started);
      return reply;
    } catch (error) {
      observeBusRequest(message.subject, error instanceof DomainError ? error.code : 'error', started);
      throw error;
    }
  }

  /** The request in a client span, whose context its message carries to the handler. */
  private tracedRequest<Request, Reply, Answer>(
    message: MessageDefinition<Request, Reply>,
    data: Request,
    read: ReplyReader<Answer>,
  ): Promise<Answer> {
    const current = requestContext.current();
    return inSpan(
      `send ${message.subject}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          ...messagingAttributes('send', message.subject),
          ...(current ? { 'licensing.request_id': current.request_id } : {}),
          ...(current?.org_id ? { 'licensing.org_id': current.org_id } : {}),
        },
      },
      () => this.request(message, data, read),
    );
  }

  private async request<Request, Reply, Answer>(
    message: MessageDefinition<Request, Reply>,
    data: Request,
    read: ReplyReader<Answer>,
  ): Promise<Answer> {
    const { subject } = message;
    if (!this.connected) {
      throw new DomainError('unavailable', 'The message bus is unreachable; retry later');
    }
    const current = requestContext.current();
    const target = namespaced(this.options.namespace, subject);
    const envelope: BusEnvelope = {
      ctx: {
        request_id: current?.request_id ?? randomUUID(),
        org_id: current?.org_id,
        actor: current?.actor,
        ip: current?.ip,
        reach: current?.reach,
      },
      data,
    };
    const id = (this.packets++).toString(36);
    let answer: Answer | Failure;
    try {
      const reply = await this.inbox!.request(
        target,
        codec.encode({ pattern: target, data: envelope, id }),
        tracing.enabled ? traceHeaders() : undefined,
        Math.max(this.options.timeoutMs, message.minTimeoutMs ?? 0),
      );
      answer = read(utf8.decode(reply.data), id);
    } catch (error) {
      throw this.translate(subject, error);
    }
    if (answer instanceof Failure) throw this.translate(subject, answer.err);
    return answer;
  }

  /**
   * Fire-and-forget broadcast to every subscriber (no queue group): for cache invalidations that
   * every replica must see, not for work that one replica must do.
   */
  publish<Payload>(broadcast: BroadcastDefinition<Payload>, payload: Payload): void {
    this.connection().publish(namespaced(this.options.namespace, broadcast.subject), codec.encode(payload));
  }

  subscribe<Payload>(
    broadcast: BroadcastDefinition<Payload>,
    handler: (payload: Payload) => void,
  ): Subscription {
    const { subject } = broadcast;
    return this.connection().subscribe(namespaced(this.options.namespace, subject), {
      callback: (error, message) => {
        if (error) return this.logger.error({ subject, err: String(error), msg: 'subscription failed' });
        handler(codec.decode(message.data) as Payload);
      },
    });
  }

  /**
   * Publishes to JetStream and resolves once the stream has stored it (at-least-once, de-duplicated
   * by `messageId`). Traced, it is a producer span of the active trace, whose context the message
   * carries to its consumers.
   */
  publishDurable(
    subject: string,
    payload: string | Uint8Array,
    messageId: string,
    headers?: MsgHdrs,
  ): Promise<void> {
    if (!tracing.enabled) return this.publishToStream(subject, payload, messageId, headers);
    return inSpan(
      `publish ${subjectFamily(subject)}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: { ...messagingAttributes('send', subject), 'messaging.message.id': messageId },
      },
      () => this.publishToStream(subject, payload, messageId, traceHeaders(headers)),
    );
  }

  /**
   * What `jetstream().publish()` does (the message with its `Nats-Msg-Id`, to the stream's
   * subject, answered by the stream's acknowledgement), over the bus's one reply inbox: nats.js's
   * `request()` under it built a `NatsError` for every acknowledgement (bench/README.md).
   */
  private async publishToStream(
    subject: string,
    payload: string | Uint8Array,
    messageId: string,
    headers: MsgHdrs | undefined,
  ): Promise<void> {
    const data = typeof payload === 'string' ? encoder.encode(payload) : payload;
    const withId = headers ?? natsHeaders();
    withId.set('Nats-Msg-Id', messageId);
    const reply = await this.inbox!.request(namespaced(this.options.namespace, subject), data, withId);
    let ack: { stream?: string; error?: { code?: number; description?: string } } | undefined;
    try {
      ack = JSON.parse(utf8.decode(reply.data)) as typeof ack;
    } catch {
      // not an acknowledgement: refused below
    }
    if (!ack?.stream || ack.error) {
      throw new NatsError(
        `JetStream did not store the message: ${ack?.error?.description ?? 'no acknowledgement'}`,
        ErrorCode.JetStreamInvalidAck,
      );
    }
  }

  /** Whether the NATS connection is up now (false while it reconnects). */
  get isConnected(): boolean {
    return this.connected;
  }

  get namespace(): string {
    return this.options.namespace;
  }

  /** How many copies of each message the JetStream streams this process creates keep. */
  get streamReplicas(): number {
    return this.options.streamReplicas ?? 1;
  }

  /** The underlying NATS connection, for JetStream consumers. */
  connection(): NatsConnection {
    if (!this.nats) throw new Error('BusClient used before connect()');
    return this.nats;
  }

  private translate(subject: string, error: unknown): DomainError {
    const known = toDomainError(error);
    if (known) return known;
    if (error instanceof NatsError && error.code === ErrorCode.NoResponders) {
      this.logger.warn({ subject, msg: 'no service answers this subject' });
      return new DomainError('unavailable', 'A backing service is unavailable; retry later');
    }
    if (error instanceof NatsError && error.code === ErrorCode.Timeout) {
      this.logger.warn({ subject, msg: 'bus request timed out' });
      return new DomainError('unavailable', 'A backing service did not answer in time; retry later');
    }
    this.logger.error({ subject, err: String(error), msg: 'bus request failed' });
    return new DomainError('unavailable', 'A backing service is unavailable; retry later');
  }

  /** Runs after the server side stopped taking messages (Nest closes microservices first). */
  async onApplicationShutdown(): Promise<void> {
    this.inbox?.close();
    if (this.nats && !this.nats.isClosed()) await this.nats.close();
  }
}

const observeBusRequest = (subject: string, outcome: string, started: number): void =>
  Metrics.busRequestDuration.observe({ subject, outcome }, (performance.now() - started) / 1000);

/** The error a service answered with (a reply whose `err` is set). */
class Failure {
  constructor(readonly err: unknown) {}
}

/** Reads a reply's text: the answer, or the service's error. Throws on text that is not a reply. */
type ReplyReader<Answer> = (text: string, id: string) => Answer | Failure;

const utf8 = new TextDecoder();

function parsedReply<Reply>(text: string): Reply | Failure {
  const packet = JSON.parse(text) as ReplyPacket<Reply>;
  if (packet.err !== undefined && packet.err !== null) return new Failure(packet.err);
  return packet.response as Reply;
}

function replyText<Reply>(text: string, id: string): JsonText<Reply> | Failure {
  const response = responseTextOf(text, id);
  if (response !== undefined) return new JsonText(response);
  const parsed = parsedReply<Reply>(text);
  return parsed instanceof Failure ? parsed : new JsonText(JSON.stringify(parsed) ?? 'null');
}
