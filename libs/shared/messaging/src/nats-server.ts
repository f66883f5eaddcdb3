import { ServerNats } from '@nestjs/microservices';
import { JSONCodec, Msg, Subscription } from 'nats';
import { DirectHandler } from './direct-dispatch';
import { BusEnvelope } from './envelope';
import { namespaced } from './subjects';

const codec = JSONCodec<{ id?: unknown; data?: Partial<BusEnvelope> }>();

type AddHandler = ServerNats['addHandler'];

/**
 * Nest's NATS server, with every handler's subject placed under the bus namespace (handlers keep
 * the plain subject constants from `@licensing/contracts`), and a shutdown that loses nothing.
 */
export class NamespacedNatsServer extends ServerNats {
  private readonly direct = new Map<string, DirectHandler>();

  constructor(
    private readonly namespace: string,
    options: ConstructorParameters<typeof ServerNats>[0],
  ) {
    super(options);
  }

  /** Serves these subjects with their direct handlers (direct-dispatch.ts) instead of Nest's RPC pipeline. */
  useDirectHandlers(handlers: Map<string, DirectHandler>): void {
    for (const [subject, handler] of handlers) this.direct.set(namespaced(this.namespace, subject), handler);
  }

  /**
   * A request to a subject with a direct handler is answered by it, in Nest's reply format; anything
   * else (a message without a reply subject or packet id, one that is not JSON) takes Nest's path.
   */
  override async handleMessage(channel: string, message: Msg): Promise<void> {
    const handler = this.direct.get(channel);
    if (!handler || !message.reply) return super.handleMessage(channel, message);
    let packet: { id?: unknown; data?: Partial<BusEnvelope> };
    try {
      packet = codec.decode(message.data);
    } catch {
      return super.handleMessage(channel, message);
    }
    if (packet?.id === undefined) return super.handleMessage(channel, message);
    const answer = await handler(packet.data, message.subject);
    try {
      message.respond(JSON.stringify({ ...answer, isDisposed: true, id: packet.id }));
    } catch (error) {
      // The connection closed under the request (a shutdown past its grace period): the caller
      // times out and retries; nothing else to do.
      this.logger.warn({
        msg: 'could not answer a bus request',
        subject: message.subject,
        err: String(error),
      });
    }
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
