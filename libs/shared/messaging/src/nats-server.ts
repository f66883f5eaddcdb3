import { ServerNats } from '@nestjs/microservices';
import { Subscription } from 'nats';
import { namespaced } from './subjects';

type AddHandler = ServerNats['addHandler'];

/**
 * Nest's NATS server, with every handler's subject placed under the bus namespace (handlers keep
 * the plain subject constants from `@licensing/contracts`), and a shutdown that loses nothing.
 */
export class NamespacedNatsServer extends ServerNats {
  constructor(
    private readonly namespace: string,
    options: ConstructorParameters<typeof ServerNats>[0],
  ) {
    super(options);
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
