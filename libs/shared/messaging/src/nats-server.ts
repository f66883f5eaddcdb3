import { ServerNats } from '@nestjs/microservices';
import { namespaced } from './subjects';

type AddHandler = ServerNats['addHandler'];

/**
 * Nest's NATS server, with every handler's subject placed under the bus namespace. Handlers keep
 * the plain subject constants from `@licensing/contracts`.
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
}
