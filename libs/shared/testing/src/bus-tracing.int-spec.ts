import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JSONCodec, MsgHdrs, NatsConnection, connect } from 'nats';
import { Streams, defineMessage, syncReportSubject } from '@licensing/contracts';
import { BusClient, ensureStream, namespaced, streamName } from '@licensing/shared/messaging';
import { startTracing, stopTracing, withSpan } from '@licensing/shared/tracing';
import { deleteNamespaceStreams } from './cleanup';
import { TEST_NATS_URL, uniqueNamespace } from './environment';

const codec = JSONCodec<{ id: string }>();
const probe = defineMessage<{ n: number }, boolean>('test.headers.v1');

/**
 * What the messaging library puts in NATS headers, read by a plain NATS subscriber and from the
 * stream: nothing of tracing while it is off, the active span's `traceparent` while it is on.
 */
describe('trace context on the bus', () => {
  const namespace = uniqueNamespace();
  const received: Array<MsgHdrs | undefined> = [];
  let nats: NatsConnection;
  let client: BusClient;

  beforeAll(async () => {
    nats = await connect({ servers: TEST_NATS_URL });
    nats.subscribe(namespaced(namespace, probe.subject), {
      callback: (_error, message) => {
        received.push(message.headers);
        message.respond(JSON.stringify({ id: codec.decode(message.data).id, response: true }));
      },
    });
    await ensureStream(nats, namespace, Streams.syncReports);
    client = new BusClient({ natsUrl: TEST_NATS_URL, namespace, timeoutMs: 2_000, name: 'bus-tracing-test' });
    await client.connect();
  });
  afterAll(async () => {
    await stopTracing();
    await client.onApplicationShutdown();
    await nats.close();
    await deleteNamespaceStreams(namespace);
  });

  /** The headers of the last message published to the sync-reports stream under `subject`. */
  const storedHeaders = async (subject: string): Promise<MsgHdrs | undefined> => {
    const manager = await nats.jetstreamManager();
    const stored = await manager.streams.getMessage(streamName(namespace, Streams.syncReports.name), {
      last_by_subj: namespaced(namespace, subject),
    });
    return stored.header;
  };

  describe('while tracing is off', () => {
    it('sends a bus request without any header', async () => {
      await expect(client.send(probe, { n: 1 })).resolves.toBe(true);
      expect(received.pop()).toBeUndefined();
    });

    it('publishes to JetStream with its message id and no trace context', async () => {
      const subject = syncReportSubject('org-off');
      await client.publishDurable(subject, '{}', 'off-1');
      const headers = await storedHeaders(subject);
      expect(headers?.get('Nats-Msg-Id')).toBe('off-1');
      expect(headers?.has('traceparent')).toBe(false);
    });
  });

  describe('while tracing is on', () => {
    const exporter = new InMemorySpanExporter();
    beforeAll(() => {
      startTracing({ service: 'bus-tracing-test', spanProcessor: new SimpleSpanProcessor(exporter) });
    });

    const spanNamed = (name: string) => exporter.getFinishedSpans().find((span) => span.name === name)!;

    it("sends a bus request with its client span's traceparent, a child of the active span", async () => {
      const caller = await withSpan('caller', { kind: SpanKind.SERVER }, async (span) => {
        await client.send(probe, { n: 2 });
        span.end();
        return span.spanContext();
      });
      const send = spanNamed('send test.headers.v1');
      expect(send.parentSpanContext?.spanId).toBe(caller.spanId);
      expect(received.pop()?.get('traceparent')).toBe(`00-${caller.traceId}-${send.spanContext().spanId}-01`);
    });

    it("publishes to JetStream with its producer span's traceparent", async () => {
      const subject = syncReportSubject('org-on');
      await client.publishDurable(subject, '{}', 'on-1');
      const publish = spanNamed('publish licensing.sync-reports');
      expect(publish.kind).toBe(SpanKind.PRODUCER);
      const headers = await storedHeaders(subject);
      expect(headers?.get('Nats-Msg-Id')).toBe('on-1');
      expect(headers?.get('traceparent')).toBe(
        `00-${publish.spanContext().traceId}-${publish.spanContext().spanId}-01`,
      );
    });
  });
});
