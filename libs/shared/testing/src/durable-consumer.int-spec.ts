import { Logger } from '@nestjs/common';
import { Streams } from '@licensing/contracts';
import {
  BusClient,
  DeadLetterHeaders,
  DurableConsumer,
  Outcome,
  StreamDefinition,
  streamName,
} from '@licensing/shared/messaging';
import { deleteNamespaceStreams } from './cleanup';
import { TEST_NATS_URL, uniqueNamespace } from './environment';
import { waitFor } from './wait-for';

const STREAM: StreamDefinition = { name: 'DURABLE_TEST', subjects: 'test.durable.>' };

/**
 * The shared durable-consumer helper against the real NATS: decoding, the three outcomes, failed
 * batches, dead letters, latency and stopping (here rather than in messaging, which testing
 * depends on).
 */
describe('DurableConsumer', () => {
  const namespace = uniqueNamespace();
  let bus: BusClient;
  type Value = { n: number; outcome?: string };
  let consumer: DurableConsumer<Value> | undefined;
  const processed: number[] = [];
  const deliveries = new Map<number, number>();
  let failNextBatch = false;

  const publish = (value: unknown, id = String(Math.random())) =>
    bus.publishDurable('test.durable.x', typeof value === 'string' ? value : JSON.stringify(value), id);

  async function deadLetters(): Promise<Array<{ reason: string; data: string }>> {
    const manager = await bus.connection().jetstreamManager();
    const info = await manager.streams
      .info(streamName(namespace, Streams.deadLetters.name))
      .catch(() => undefined);
    if (!info || info.state.messages === 0) return [];
    const letters = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
      const message = await manager.streams.getMessage(streamName(namespace, Streams.deadLetters.name), {
        seq,
      });
      letters.push({
        reason: message.header.get(DeadLetterHeaders.reason),
        data: new TextDecoder().decode(message.data),
      });
    }
    return letters;
  }

  function start(durable: string): Promise<void> {
    const started = new DurableConsumer<Value>(bus, {
      durable,
      stream: STREAM,
      decode: (message) => {
        try {
          const value = message.json<Value | null>();
          return typeof value?.n === 'number' ? { value } : { problem: 'no n' };
        } catch {
          return { problem: 'not JSON' };
        }
      },
      process: async (batch) => {
        if (failNextBatch) {
          failNextBatch = false;
          throw new Error('the store is away');
        }
        return batch.map(({ value }): Outcome => {
          deliveries.set(value.n, (deliveries.get(value.n) ?? 0) + 1);
          if (value.outcome === 'retry-once' && deliveries.get(value.n) === 1) return { retryInMs: 50 };
          if (value.outcome === 'poison') return { deadLetter: `poisoned ${value.n}` };
          processed.push(value.n);
          return 'ack';
        });
      },
      batchSize: 50,
      batchWaitMs: 5_000,
      retryDelayMs: 50,
    });
    consumer = started;
    return started.start();
  }

  beforeAll(async () => {
    Logger.overrideLogger(false);
    bus = new BusClient({
      natsUrl: TEST_NATS_URL,
      namespace,
      timeoutMs: 2_000,
      name: 'durable-test',
    });
    await bus.connect();
    await start('durable-test');
  });
  afterAll(async () => {
    await consumer?.stop();
    await deleteNamespaceStreams(namespace);
    await bus.onApplicationShutdown();
  });

  it('processes a message as soon as it arrives, not when the pull request ends', async () => {
    const sent = Date.now();
    await publish({ n: 1 });
    await waitFor(() => processed.includes(1), { what: 'message 1' });
    expect(Date.now() - sent).toBeLessThan(1_000);
  });

  it('sets a message that does not decode aside with its reason, and goes on', async () => {
    await publish('not json at all');
    await publish({ n: 2 });
    await waitFor(() => processed.includes(2), { what: 'message 2' });
    await waitFor(async () => (await deadLetters()).some((l) => l.data === 'not json at all'), {
      what: 'the dead letter',
    });
    expect((await deadLetters()).find((l) => l.data === 'not json at all')?.reason).toBe(
      'malformed: not JSON',
    );
  });

  it('redelivers a message whose outcome is a retry, and sets aside one that says so', async () => {
    await publish({ n: 3, outcome: 'retry-once' });
    await publish({ n: 4, outcome: 'poison' });
    await waitFor(() => processed.includes(3), { what: 'message 3 on its second delivery' });
    expect(deliveries.get(3)).toBe(2);
    await waitFor(async () => (await deadLetters()).some((l) => l.reason === 'poisoned 4'), {
      what: 'message 4 set aside',
    });
    expect(deliveries.get(4)).toBe(1);
  });

  it('retries a whole batch whose processing failed, losing nothing', async () => {
    failNextBatch = true;
    await publish({ n: 5 });
    await waitFor(() => processed.includes(5), { what: 'message 5 after the failed batch' });
  });

  it('stops promptly while a pull request is open, and a new consumer takes over where it stopped', async () => {
    const stopping = Date.now();
    await consumer!.stop();
    expect(Date.now() - stopping).toBeLessThan(1_000);
    await publish({ n: 6 });
    expect(processed).not.toContain(6);
    await start('durable-test');
    await waitFor(() => processed.includes(6), { what: 'message 6 after the restart' });
    expect(await consumer!.lag()).toBe(0);
  });

  it('waits lingerMs for a short batch to fill, so a steady trickle is processed in a few batches', async () => {
    const batches: number[][] = [];
    const lingering = new DurableConsumer<Value>(bus, {
      durable: 'linger-test',
      stream: STREAM,
      filterSubject: 'test.durable.linger',
      decode: (message) => ({ value: message.json<Value>() }),
      process: async (batch) => {
        batches.push(batch.map(({ value }) => value.n));
        return batch.map((): Outcome => 'ack');
      },
      batchSize: 50,
      batchWaitMs: 5_000,
      lingerMs: 1_000,
    });
    await lingering.start();
    try {
      for (let n = 100; n < 110; n += 1) {
        await bus.publishDurable('test.durable.linger', JSON.stringify({ n }), String(Math.random()));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await waitFor(() => batches.flat().length === 10, { what: 'the ten messages' });
      // Without the linger each would be a batch of its own: they arrive 20 ms apart.
      expect(batches.length).toBeLessThanOrEqual(2);
      expect(batches.flat().sort()).toEqual([100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
    } finally {
      await lingering.stop();
    }
  });

  it('binds again when its durable is deleted under it, and goes on', async () => {
    const manager = await bus.connection().jetstreamManager();
    await manager.consumers.delete(streamName(namespace, STREAM.name), 'durable-test');
    await publish({ n: 7 });
    await waitFor(() => processed.includes(7), { what: 'message 7 through the durable created again' });
  });
});
