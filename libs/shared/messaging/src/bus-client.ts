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
  /**
   * How many servers the NATS cluster has (NATS_CLUSTER_SIZE). By default, how many `natsUrl`
   * names. While the client's server is routed to no more than half of them, requests fail at once.
   */
  clusterSize?: number;
}

/**
 * How every connection of a process to NATS notices a server it cannot reach. It pings the server
 * every second and takes the connection as lost after two pings unanswered: a server cut off by
 * the network (no reset, nothing refused) is left within 2 to 3 s, not after nats.js's default of
 * 2 minutes. A connection attempt to a server that drops packets fails after 2 s (nats.js: 20 s),
 * and the next server is tried.
 */
export const NATS_LIVENESS = { pingInterval: 1_000, maxPingOut: 2, timeout: 2_000 } as const;

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
  /** Whether the connected server sees no majority of the cluster (`judgeQuorum`). */
  private cutOff = false;
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
      ...NATS_LIVENESS,
      // nats.js builds an Error for every request() up front, for a stack trace should it fail;
      // JetStream publishes (every sync, every relayed event) are request()s.
      noAsyncTraces: true,
    });
    this.inbox = new ReplyInbox(this.nats, this.options.timeoutMs);
    this.connected = true;
    this.judgeQuorum();
    void this.followStatus(this.nats);
  }

  /** How many servers make the cluster; 1 means no quorum is judged. */
  private get clusterSize(): number {
    return this.options.clusterSize || this.options.natsUrl.split(',').filter((url) => url.trim()).length;
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
        this.judgeQuorum();
      } else if (status.type === Events.Update) {
        this.judgeQuorum();
      }
    }
  }

  /**
   * A NATS server tells its clients which servers it is routed to (`connect_urls` of every INFO),
   * and tells them again whenever a route comes or goes. A server cut off from most of its cluster
   * is on the minority side of a partition: it holds no JetStream quorum, and the replicas it
   * reaches are cut off too. Rather than wait for the bus timeout, the client then fails every
   * request at once, including those already waiting, and its process reports itself unready.
   * A server that advertises no URLs (`no_advertise`) is not judged.
   */
  private judgeQuorum(): void {
    const seen = this.nats?.info?.connect_urls?.length ?? 0;
    const size = this.clusterSize;
    const cutOff = size > 1 && seen > 0 && seen * 2 <= size;
    if (cutOff === this.cutOff) return;
    this.cutOff = cutOff;
    if (cutOff) {
      this.logger.warn({
        msg: 'NATS server cut off from most of its cluster; bus requests fail at once until it is back',
        routed: seen,
        cluster_size: size,
      });
      this.inbox?.failAll(cutOffError());
    } else {
      this.logger.log({
        msg: 'NATS server routed to most of its cluster again',
        routed: seen,
        cluster_size: size,
      });
    }
  }

  /** Throws `unavailable` when a request could not be answered: no connection, or no quorum. */
  private ensureAvailable(): void {
    if (!this.connected) throw new DomainError('unavailable', 'The message bus is unreachable; retry later');
    if (this.cutOff) throw cutOffError();
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
    this.ensureAvailable();
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
    this.ensureAvailable();
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

  /** Whether requests can be answered now: connected, to a server that sees most of its cluster. */
  get isAvailable(): boolean {
    return this.connected && !this.cutOff;
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

const cutOffError = () =>
  new DomainError('unavailable', 'The message bus is cut off from most of its cluster; retry later');

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
