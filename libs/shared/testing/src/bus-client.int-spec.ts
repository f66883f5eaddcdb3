import { defineMessage } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { requestContext } from '@licensing/shared/logging';
import { connect, headers as natsHeaders, NatsConnection, StringCodec } from 'nats';
import {
  BusClient,
  JsonText,
  encodeReply,
  ensureStream,
  namespaced,
  streamName,
} from '@licensing/shared/messaging';
import { ScriptedPeer } from './bus';
import { deleteNamespaceStreams } from './cleanup';
import { TEST_NATS_URL, uniqueNamespace } from './environment';

/**
 * The messaging library's BusClient against the real NATS, with the far side played by this
 * library's ScriptedPeer in Nest's wire format (here rather than in messaging, which testing
 * depends on).
 */
describe('BusClient', () => {
  const namespace = uniqueNamespace();
  let client: BusClient;
  let peer: ScriptedPeer;
  const seen: unknown[] = [];

  beforeAll(async () => {
    peer = (await ScriptedPeer.connect(namespace))
      .on(defineMessage('test.echo.v1'), (data) => ({ response: { echoed: data } }))
      .on(defineMessage('test.refuse.v1'), () => ({
        err: { code: 'seat_limit_reached', status: 409, message: 'All 5 seats are in use' },
      }))
      .on(defineMessage('test.silent.v1'), () => new Promise(() => undefined))
      .on(
        defineMessage('test.slow.v1'),
        () => new Promise((resolve) => setTimeout(() => resolve({ response: 'done' }), 700)),
      )
      .on(defineMessage('test.context.v1'), (data, ctx) => {
        seen.push({ data, ctx });
        return { response: true };
      });
    client = new BusClient({
      natsUrl: TEST_NATS_URL,
      namespace,
      timeoutMs: 300,
      name: 'bus-client-test',
    });
    await client.connect();
  });

  afterAll(async () => {
    await client.onApplicationShutdown();
    await peer.close();
  });

  it('answers the reply of the service', async () => {
    await expect(client.send(defineMessage('test.echo.v1'), { a: 1 })).resolves.toEqual({ echoed: { a: 1 } });
  });

  it('turns a typed error from the service into the same DomainError', async () => {
    const error = await client.send(defineMessage('test.refuse.v1'), {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({
      code: 'seat_limit_reached',
      status: 409,
      message: 'All 5 seats are in use',
    });
  });

  it('fails at once with unavailable when no service serves the subject', async () => {
    const started = Date.now();
    await expect(client.send(defineMessage('test.nobody.v1'), {})).rejects.toMatchObject({
      code: 'unavailable',
      status: 503,
    });
    expect(Date.now() - started).toBeLessThan(250); // well under the 300 ms timeout
  });

  it('gives up with unavailable when the service does not answer in time, and no sooner', async () => {
    const started = Date.now();
    await expect(client.send(defineMessage('test.silent.v1'), {})).rejects.toMatchObject({
      code: 'unavailable',
      status: 503,
    });
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(waited).toBeLessThan(600);
  });

  it("waits for a slow message's reply as long as its definition asks, past the client's timeout", async () => {
    const started = Date.now();
    await expect(
      client.send(defineMessage<object, string>('test.slow.v1', undefined, { minTimeoutMs: 2_000 }), {}),
    ).resolves.toBe('done');
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    // The same subject under the client's own 300 ms gives up.
    await expect(client.send(defineMessage('test.slow.v1'), {})).rejects.toMatchObject({
      code: 'unavailable',
    });
  });

  it('gives up on a request at its own deadline while one sent before it waits longer', async () => {
    const patient = client
      .send(defineMessage<object, string>('test.silent.v1', undefined, { minTimeoutMs: 5_000 }), {})
      .catch((e: unknown) => e);
    const started = Date.now();
    await expect(client.send(defineMessage('test.silent.v1'), {})).rejects.toMatchObject({
      code: 'unavailable',
    });
    expect(Date.now() - started).toBeLessThan(600);
    expect(await patient).toMatchObject({ code: 'unavailable' });
  });

  it('gives each of many concurrent requests its own reply, beside requests that time out', async () => {
    // A deadline 500 answers meet on a loaded machine too (300 ms did not, once in CI).
    const patient = new BusClient({
      natsUrl: TEST_NATS_URL,
      namespace,
      timeoutMs: 2_000,
      name: 'bus-client-test',
    });
    await patient.connect();
    try {
      const silent = patient.send(defineMessage('test.silent.v1'), {}).catch((e: unknown) => e);
      const replies = await Promise.all(
        Array.from({ length: 500 }, (_, i) => patient.send(defineMessage('test.echo.v1'), { i })),
      );
      expect(replies).toEqual(Array.from({ length: 500 }, (_, i) => ({ echoed: { i } })));
      expect(await silent).toMatchObject({ code: 'unavailable' });
    } finally {
      await patient.onApplicationShutdown();
    }
  });

  describe('forward: the reply text as received', () => {
    let raw: NatsConnection;
    /** What the raw service answers for a request id: the exact text of its reply. */
    let answer: (id: string) => string;

    beforeAll(async () => {
      raw = await connect({ servers: TEST_NATS_URL });
      const text = StringCodec();
      raw.subscribe(namespaced(namespace, 'test.raw.v1'), {
        callback: (_, message) => {
          const { id } = JSON.parse(text.decode(message.data)) as { id: string };
          message.respond(text.encode(answer(id)));
        },
      });
      await raw.flush();
    });
    afterAll(() => raw.close());

    it("passes a direct handler's response through untouched, byte for byte", async () => {
      // Spacing and key order a parse and a second serialization would not keep.
      const response = '{"z": 1,  "a": ["x" , {"é": null}]}';
      answer = (id) => `{"response":${response},"isDisposed":true,"id":${JSON.stringify(id)}}`;
      const forwarded = await client.forward(defineMessage('test.raw.v1'), {});
      expect(forwarded).toBeInstanceOf(JsonText);
      expect(forwarded.text).toBe(response);
    });

    it('reads what encodeReply writes, and nothing else, as a response to pass through', async () => {
      answer = (id) => encodeReply({ response: { ok: true, serials: ['A', 'B'] } }, id);
      expect((await client.forward(defineMessage('test.raw.v1'), {})).text).toBe(
        '{"ok":true,"serials":["A","B"]}',
      );
      // The id must be this request's: a reply that names another is parsed, not cut.
      answer = () => encodeReply({ response: { ok: 1 } }, 'another');
      expect((await client.forward(defineMessage('test.raw.v1'), {})).text).toBe('{"ok":1}');
    });

    it("serializes a reply of another shape (Nest's own order) after parsing it", async () => {
      await expect(client.forward(defineMessage('test.echo.v1'), { a: 1 })).resolves.toEqual(
        new JsonText('{"echoed":{"a":1}}'),
      );
    });

    it('turns an error reply into the same DomainError as send', async () => {
      await expect(client.forward(defineMessage('test.refuse.v1'), {})).rejects.toMatchObject({
        code: 'seat_limit_reached',
        status: 409,
      });
      answer = (id) => encodeReply({ err: { code: 'not_found', status: 404, message: 'gone' } }, id);
      await expect(client.forward(defineMessage('test.raw.v1'), {})).rejects.toMatchObject({
        code: 'not_found',
        status: 404,
      });
    });
  });

  it("carries the caller's request id and organization", async () => {
    await requestContext.run({ request_id: 'req-42', org_id: 'org-7' }, () =>
      client.send(defineMessage('test.context.v1'), { x: 1 }),
    );
    expect(seen).toEqual([{ data: { x: 1 }, ctx: { request_id: 'req-42', org_id: 'org-7' } }]);
  });

  describe('publishDurable: stored by JetStream, or a failure', () => {
    const stream = { name: 'BUS_CLIENT_TEST', subjects: 'bus-client-test.>' };
    let nats: NatsConnection;
    beforeAll(async () => {
      nats = await connect({ servers: TEST_NATS_URL });
      await ensureStream(nats, namespace, stream);
    });
    afterAll(async () => {
      await nats.close();
      await deleteNamespaceStreams(namespace);
    });

    it('resolves once the stream holds the message, once per message id', async () => {
      await client.publishDurable('bus-client-test.a', '{"n":1}', 'id-1');
      await client.publishDurable('bus-client-test.a', '{"n":1}', 'id-1'); // a retry: stored once
      await client.publishDurable('bus-client-test.a', new TextEncoder().encode('{"n":2}'), 'id-2');
      const manager = await nats.jetstreamManager();
      const info = await manager.streams.info(streamName(namespace, stream.name));
      expect(info.state.messages).toBe(2);
      const last = await manager.streams.getMessage(streamName(namespace, stream.name), {
        last_by_subj: namespaced(namespace, 'bus-client-test.a'),
      });
      expect(last.header.get('Nats-Msg-Id')).toBe('id-2');
      expect(last.string()).toBe('{"n":2}');
    });

    it('rejects when no stream takes the subject, and when the stream refuses the message', async () => {
      await expect(client.publishDurable('nobody.stores.this', '{}', 'id-3')).rejects.toThrow();
      const manager = await nats.jetstreamManager();
      // Expecting another last message id than the stream's: JetStream answers with an error.
      const headers = natsHeaders();
      headers.set('Nats-Expected-Last-Msg-Id', 'not-the-last');
      await expect(client.publishDurable('bus-client-test.b', '{}', 'id-4', headers)).rejects.toThrow(
        /JetStream did not store the message/,
      );
      const info = await manager.streams.info(streamName(namespace, stream.name));
      expect(info.state.messages).toBe(2);
    });
  });
});
