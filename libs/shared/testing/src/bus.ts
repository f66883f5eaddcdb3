import { randomUUID } from 'node:crypto';
import { JSONCodec, NatsConnection, Subscription, connect } from 'nats';
import { MessageDefinition } from '@licensing/contracts';
import { RequestActor, requestContext } from '@licensing/shared/logging';
import { BusClient, namespaced } from '@licensing/shared/messaging';
import { TEST_NATS_URL } from './environment';

/** Sends bus requests to services under test as if it were the gateway, on behalf of an organization. */
export class BusTestClient {
  private constructor(private readonly client: BusClient) {}

  static async connect(namespace: string): Promise<BusTestClient> {
    const client = new BusClient({ natsUrl: TEST_NATS_URL, namespace, timeoutMs: 10_000, name: 'test' });
    await client.connect();
    return new BusTestClient(client);
  }

  /**
   * Requests on behalf of `orgId`. The reply is typed by the message; the request is not, so that a
   * test can send what no well-typed caller could (an invalid id, a missing field). With `actor`
   * (the API key the gateway would name), the changes the requests make are audited.
   */
  as(orgId: string, actor?: RequestActor) {
    return {
      send: <Reply>(message: MessageDefinition<unknown, Reply>, data: unknown): Promise<Reply> =>
        requestContext.run({ request_id: randomUUID(), org_id: orgId, actor }, () =>
          this.client.send(message, data),
        ),
    };
  }

  close(): Promise<void> {
    return this.client.onApplicationShutdown();
  }
}

type Reply = { response: unknown } | { err: unknown };

/**
 * Plays a peer service on the bus, speaking Nest's NATS request/reply format, so that a service
 * can be tested alone against the real NATS with its neighbour's answers scripted by the test.
 */
export class ScriptedPeer {
  private readonly codec = JSONCodec<{
    id: string;
    data: { ctx: { request_id: string; org_id?: string }; data: unknown };
  }>();
  private readonly subscriptions: Subscription[] = [];

  private constructor(
    private readonly connection: NatsConnection,
    private readonly namespace: string,
  ) {}

  /** `servers`: the NATS servers to answer on (comma separated); the test's shared one by default. */
  static async connect(namespace: string, servers = TEST_NATS_URL): Promise<ScriptedPeer> {
    return new ScriptedPeer(await connect({ servers: servers.split(',') }), namespace);
  }

  /** Answers `message` with what `handler` returns for each request's payload (and its context). */
  on(
    message: MessageDefinition<unknown, unknown>,
    handler: (data: any, ctx: { request_id: string; org_id?: string }) => Reply | Promise<Reply>,
  ): this {
    const subscription = this.connection.subscribe(namespaced(this.namespace, message.subject), {
      callback: (error, received) => {
        if (error) return;
        const request = this.codec.decode(received.data);
        void Promise.resolve(handler(request.data.data, request.data.ctx)).then((reply) =>
          received.respond(JSONCodec().encode({ id: request.id, isDisposed: true, ...reply })),
        );
      },
    });
    this.subscriptions.push(subscription);
    return this;
  }

  async close(): Promise<void> {
    await this.connection.drain();
  }
}
