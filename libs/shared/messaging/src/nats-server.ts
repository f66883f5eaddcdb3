import { ServerNats } from '@nestjs/microservices';
import { JSONCodec, Msg, Subscription } from 'nats';
import { SpanKind, failSpan, tracing } from '@licensing/shared/tracing';
import { inSpan, messagingAttributes, traceContextOf } from './bus-tracing';
import { DirectHandler, HandlerAnswer } from './direct-dispatch';
import { BusEnvelope } from './envelope';
import { namespaced } from './subjects';
import { encodeReply } from './reply-wire';

const codec = JSONCodec<{ id?: unknown; data?: Partial<BusEnvelope> }>();

type AddHandler = ServerNats['addHandler'];

/**
 * Nest's NATS server, with every handler's subject placed under the bus namespace (handlers keep
 * the plain subject constants from `@licensing/contracts`), and a shutdown that loses nothing.
 */
export class NamespacedNatsServer extends ServerNats {
  private readonly direct = new Map<string, DirectHandler>();
  private readonly queue?: string;

  constructor(
    private readonly namespace: string,
    options: ConstructorParameters<typeof ServerNats>[0],
  ) {
    super(options);
    this.queue = options?.queue;
  }

  /** Serves these subjects with their direct handlers (direct-dispatch.ts) instead of Nest's RPC pipeline. */
  useDirectHandlers(handlers: Map<string, DirectHandler>): void {
    for (const [subject, handler] of handlers) this.direct.set(namespaced(this.namespace, subject), handler);
  }

  /**
   * A request to a subject with a direct handler is answered by it, in Nest's reply format; anything
   * else (a message without a reply subject or packet id, one that is not JSON) takes Nest's path.
   * Traced, either is a server span continuing the trace of the message's `traceparent` (on Nest's
   * path it ends once the handler has been called, not when its answer has been sent).
   */
  override handleMessage(channel: string, message: Msg): Promise<unknown> {
    return tracing.enabled ? this.handleTraced(channel, message) : this.dispatch(channel, message);
  }

  private async handleTraced(channel: string, message: Msg): Promise<void> {
    const subject = this.namespace ? channel.slice(this.namespace.length + 1) : channel;
    await inSpan(
      `process ${subject}`,
      {
        kind: SpanKind.SERVER,
        parent: traceContextOf(message.headers),
        attributes: {
          ...messagingAttributes('process', subject),
          ...(this.queue ? { 'messaging.consumer.group.name': this.queue } : {}),
        },
      },
      async (span) => {
        const answer = await this.dispatch(channel, message);
        if (answer && 'err' in answer) {
          if (answer.err.status >= 500) failSpan(span, answer.err.code);
          else span.setAttribute('error.type', answer.err.code);
        }
      },
    );
  }

  /** Answers one message; what a direct handler answered, undefined on Nest's path. */
  private async dispatch(channel: string, message: Msg): Promise<HandlerAnswer | undefined> {
    const handler = this.direct.get(channel);
    if (!handler || !message.reply) return this.nestHandles(channel, message);
    let packet: { id?: unknown; data?: Partial<BusEnvelope> };
    try {
      packet = codec.decode(message.data);
    } catch {
      return this.nestHandles(channel, message);
    }
    if (packet?.id === undefined) return this.nestHandles(channel, message);
    const answer = await handler(packet.data, message.subject);
    try {
      message.respond(encodeReply(answer, packet.id));
    } catch (error) {
      // The connection closed under the request (a shutdown past its grace period): the caller
      // times out and retries; nothing else to do.
      this.logger.warn({
        msg: 'could not answer a bus request',
        subject: message.subject,
        err: String(error),
      });
    }
    return answer;
  }

  private async nestHandles(channel: string, message: Msg): Promise<undefined> {
    await super.handleMessage(channel, message);
    return undefined;
  }

  override addHandler(...[pattern, ...rest]: Parameters<AddHandler>): ReturnType<AddHandler> {
    const subject = typeof pattern === 'string' ? namespaced(this.namespace, pattern) : pattern;
    return super.addHandler(subject, ...rest);
  }

  /**
   * Nest's graceful shutdown unsubscribes, which throws away every request NATS had already routed
   * to this replica and not yet handed to a handler: their callers wait for the bus timeout. Draining
   * instead tells NATS to route no more here (the other replicas of the queue group take over),
   * and hands each message already on its way to its handler; then Nest's grace period lets those
   * finish before the connection closes.
   */
  override async close(): Promise<void> {
    const subscriptions = (this as unknown as { subscriptions: Subscription[] }).subscriptions;
    await Promise.all(subscriptions.map((subscription) => subscription.drain().catch(() => undefined)));
    return super.close();
  }
}
