import { spawn } from 'node:child_process';
import { Logger } from '@nestjs/common';
import { BusClient, DurableConsumer, StreamDefinition, namespaced } from '@licensing/shared/messaging';
import { uniqueNamespace } from './environment';
import { OwnServer, startOwnNats } from './processes';
import { waitFor } from './wait-for';

const STREAM: StreamDefinition = { name: 'PULL_RACE_TEST', subjects: 'test.race.>' };
/** Pulls as short as nats.js's fetch() allowed, so that many of them expire during a test. */
const PULL_EXPIRES_MS = 1_000;
/** Messages a publisher sends, one every 20 ms. */
const MESSAGES = 150;
/**
 * Far under the ack wait (30 s): a message the client dropped comes back only when its ack wait
 * ends, so waiting this long for all of them tells a dropped message from a slow one.
 */
const ALL_PROCESSED_WITHIN_MS = 10_000;

/**
 * A message JetStream delivers to a pull request the client has already given up on. nats.js's
 * fetch() ends a pull on a timer of its own, 5 % after the pull's expiry, and unsubscribes its
 * inbox; whatever the server sent to that pull and the client reads afterwards is dropped, and
 * JetStream sends it again only when the ack wait ends. Against a private nats-server, so that
 * the load and the stalls stay out of the shared one.
 */
describe('DurableConsumer: messages delivered to an expiring pull request', () => {
  const namespace = uniqueNamespace();
  let nats: OwnServer;
  let bus: BusClient;
  let consumer: DurableConsumer<number>;
  const processed = new Set<number>();

  /**
   * Publishes `MESSAGES` messages (0, 1, 2…), one every 20 ms, from a process of its own: it goes on
   * while this process's event loop is blocked. Resolves when they are all sent.
   */
  function publishFromAnotherProcess(): Promise<void> {
    const script = `
      const { connect } = require(${JSON.stringify(require.resolve('nats'))});
      (async () => {
        const connection = await connect({ servers: ${JSON.stringify(nats.url)} });
        for (let n = 0; n < ${MESSAGES}; n += 1) {
          connection.publish(${JSON.stringify(namespaced(namespace, 'test.race.x'))}, String(n));
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await connection.drain();
      })();`;
    const publisher = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    return new Promise((resolve, reject) =>
      publisher.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`publisher exited ${code}`)),
      ),
    );
  }

  beforeAll(async () => {
    Logger.overrideLogger(false);
    nats = await startOwnNats();
    bus = new BusClient({ natsUrl: nats.url, namespace, timeoutMs: 2_000, name: 'pull-race-test' });
    await bus.connect();
    consumer = new DurableConsumer<number>(bus, {
      durable: 'pull-race-test',
      stream: STREAM,
      decode: (message) => ({ value: Number(message.string()) }),
      process: async (batch) =>
        batch.map(({ value }) => {
          processed.add(value);
          return 'ack';
        }),
      batchSize: 100,
      batchWaitMs: PULL_EXPIRES_MS,
    });
    await consumer.start();
  });
  afterAll(async () => {
    await consumer?.stop();
    await bus?.onApplicationShutdown();
    await nats?.dispose();
  });

  it("processes every message although the client's event loop was busy past a pull's expiry", async () => {
    const publishing = publishFromAnotherProcess();
    // Busy for longer than a pull lives: the pull's expiry passes on the client's clock before it
    // reads what the server sent meanwhile (timers run before socket reads in Node's event loop).
    const blocked = new Int32Array(new SharedArrayBuffer(4));
    for (let i = 0; i < 3; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      Atomics.wait(blocked, 0, 0, PULL_EXPIRES_MS * 1.3);
    }
    await publishing;
    await waitFor(() => processed.size === MESSAGES, {
      timeoutMs: ALL_PROCESSED_WITHIN_MS,
      what: `all ${MESSAGES} messages processed`,
    });
  });
});
