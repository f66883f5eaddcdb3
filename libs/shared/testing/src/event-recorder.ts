import { ConsumerMessages, NatsConnection, connect } from 'nats';
import { LicensingEvent, Streams } from '@licensing/contracts';
import { StreamDefinition, ensureStream } from '@licensing/shared/messaging';
import { TEST_NATS_URL } from './environment';
import { waitFor } from './wait-for';

/**
 * Records every event published on a namespace's LICENSING_EVENTS stream (or another stream, as
 * AUDIT_EVENTS), from its first message, with an ordered consumer: what an internal subscriber would see.
 */
export class EventRecorder {
  readonly events: Array<LicensingEvent<any> & { subject: string; messageId?: string }> = [];

  private constructor(
    private readonly connection: NatsConnection,
    private readonly messages: ConsumerMessages,
  ) {}

  static async start(namespace: string, stream: StreamDefinition = Streams.events): Promise<EventRecorder> {
    const connection = await connect({ servers: TEST_NATS_URL });
    const { name } = await ensureStream(connection, namespace, stream);
    const consumer = await connection.jetstream().consumers.get(name);
    const messages = await consumer.consume();
    const recorder = new EventRecorder(connection, messages);
    void (async () => {
      for await (const message of messages) {
        // A message of AUDIT_EVENTS may hold several entries: each is recorded.
        const body = message.json<LicensingEvent | LicensingEvent[]>();
        for (const one of Array.isArray(body) ? body : [body]) {
          recorder.events.push({
            ...one,
            subject: message.subject,
            messageId: message.headers?.get('Nats-Msg-Id'),
          });
        }
      }
    })();
    return recorder;
  }

  of(type: string, predicate: (event: LicensingEvent<any>) => boolean = () => true) {
    return this.events.filter((event) => event.type === type && predicate(event));
  }

  /** Waits until an event of `type` matching `predicate` has arrived, and answers it. */
  waitFor(type: string, predicate: (event: LicensingEvent<any>) => boolean = () => true, timeoutMs = 10_000) {
    return waitFor(() => this.of(type, predicate)[0], { timeoutMs, what: `event ${type}` });
  }

  async stop(): Promise<void> {
    this.messages.stop();
    await this.connection.drain();
  }
}
