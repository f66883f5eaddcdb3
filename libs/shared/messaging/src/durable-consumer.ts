import { Logger } from '@nestjs/common';
import { AckPolicy, DeliverPolicy, JetStreamManager, JsMsg, NatsError, nanos } from 'nats';
import { Streams } from '@licensing/contracts';
import { Metrics } from '@licensing/shared/metrics';
import { ROOT_CONTEXT, SpanKind, linksTo, tracing } from '@licensing/shared/tracing';
import { BusClient } from './bus-client';
import { inSpan, messagingAttributes, traceContextOf } from './bus-tracing';
import { deadLetter } from './dead-letter';
import { StreamDefinition, ensureStream, streamName } from './jetstream';
import { PullInbox } from './pull-inbox';
import { namespaced } from './subjects';

/** What became of one message: stored (ack), to be tried again later, or impossible for its content. */
export type Outcome = 'ack' | { retryInMs: number } | { deadLetter: string };

/** A message read by `decode`: its value, or why it can never be processed. */
export type Decoded<T> = { value: T } | { problem: string };

export interface Delivery<T> {
  message: JsMsg;
  value: T;
}

export interface DurableConsumerSpec<T> {
  /** The durable's name: every replica binds the same one, so each message reaches one of them. */
  durable: string;
  stream: StreamDefinition;
  /** Only these subjects of the stream (without the bus namespace, which is added). */
  filterSubject?: string;
  /** Reads one message. A problem sends it to the dead-letter stream at once. */
  decode(message: JsMsg): Decoded<T>;
  /**
   * Processes a batch of decoded messages, answering an outcome for each, in order. Throwing means
   * the whole batch failed for a reason that is not its content (a database away): it is retried.
   */
  process(batch: Delivery<T>[]): Promise<Outcome[]>;
  /** Messages per pull. */
  batchSize: number;
  /** How long one pull request stays open (messages are processed as they arrive, not after it). */
  batchWaitMs: number;
  /**
   * How long a batch smaller than `batchSize` waits for more messages before it is processed: under
   * a steady flow shared by several pullers, larger batches for a few milliseconds of delay.
   * None by default.
   */
  lingerMs?: number;
  /** How long a delivered message may stay unacknowledged before JetStream sends it again. */
  ackWaitMs?: number;
  /** Unacknowledged messages the durable allows across all replicas. */
  maxAckPending?: number;
  /** After a failed batch, how long until its messages come back. */
  retryDelayMs?: number;
}

/**
 * Processes a batch with one call of `store`. If the store refuses the batch for its content
 * (`isRefusal`: PostgreSQL's data errors, say), each message is stored alone, so that the one at
 * fault is set aside and the others are kept. Any other failure throws: the batch is retried.
 */
export async function storeBatch<T>(
  batch: Delivery<T>[],
  store: (values: T[]) => Promise<unknown>,
  refusal: { isRefusal: (error: unknown) => boolean; by: string },
): Promise<Outcome[]> {
  const setAside = (error: unknown): Outcome => {
    if (!refusal.isRefusal(error)) throw error;
    return { deadLetter: `refused by ${refusal.by}: ${String(error)}` };
  };
  try {
    await store(batch.map(({ value }) => value));
    return batch.map(() => 'ack');
  } catch (error) {
    if (batch.length === 1) return [setAside(error)];
    if (!refusal.isRefusal(error)) throw error;
    const outcomes: Outcome[] = [];
    for (const { value } of batch) outcomes.push(await store([value]).then((): Outcome => 'ack', setAside));
    return outcomes;
  }
}

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;
const CONSUMER_NOT_FOUND = 10014;

/**
 * The one way a service consumes a JetStream stream durably. It creates the stream, the dead-letter
 * stream and the durable consumer when they are missing (in any boot order, any number of
 * replicas), pulls batches, and settles every message: acknowledged once processed, sent again
 * after a delay when processing failed for a reason outside the message, or set aside in the
 * dead-letter stream (with the reason) when it can never be processed — a poisoned message costs
 * one delivery and cannot block or endlessly recycle. When NATS goes away it binds again with
 * backoff; `stop()` lets the batch in hand finish, and sends the rest back at once for another
 * replica. Pull requests go through a `PullInbox`, which never drops what the server delivered.
 */
export class DurableConsumer<T> {
  private readonly logger: Logger;
  private running = false;
  private loop?: Promise<void>;
  private inbox?: PullInbox;
  private wake?: () => void;
  private unmeasure?: () => void;
  /** Messages set aside since start, for an operator's metrics; the dead-letter stream holds them all. */
  deadLettered = 0;

  constructor(
    private readonly bus: BusClient,
    private readonly spec: DurableConsumerSpec<T>,
  ) {
    this.logger = new Logger(`DurableConsumer:${spec.durable}`);
  }

  /**
   * Binds the consumer (so that a NATS without JetStream fails the boot rather than quietly), then
   * consumes in the background.
   */
  async start(): Promise<void> {
    if (this.running) return;
    const consumer = await this.bind();
    this.running = true;
    this.measure();
    this.loop = this.run(consumer);
  }

  /** Consumes without waiting for the first bind: for a process that must serve while JetStream is away. */
  startInBackground(): void {
    if (this.running) return;
    this.running = true;
    this.measure();
    this.loop = this.run(undefined);
  }

  /** The consumer's lag on /metrics, read from JetStream at scrape time. */
  private measure(): void {
    const labels = { stream: this.spec.stream.name, durable: this.spec.durable };
    this.unmeasure = Metrics.consumerLag.addSource(async (sample) => sample(labels, await this.lag()));
  }

  async stop(): Promise<void> {
    this.unmeasure?.();
    this.running = false;
    this.inbox?.wake();
    this.wake?.();
    await this.loop;
    this.loop = undefined;
    // What arrived while the last batch was processed goes back at once, to another replica.
    for (const message of (await this.inbox?.close()) ?? []) message.nak();
    this.inbox = undefined;
  }

  /** Messages not yet delivered plus those delivered and not yet acknowledged: the consumer's lag. */
  async lag(): Promise<number> {
    const manager = await this.bus.connection().jetstreamManager();
    const info = await manager.consumers.info(
      streamName(this.bus.namespace, this.spec.stream.name),
      this.spec.durable,
    );
    return info.num_pending + info.num_ack_pending;
  }

  private async run(bound: string | undefined): Promise<void> {
    let subject = bound;
    let backoff = MIN_BACKOFF_MS;
    while (this.running) {
      try {
        subject ??= await this.bind();
        this.inbox ??= new PullInbox(this.bus.connection(), {
          subject,
          batch: this.spec.batchSize,
          expiresMs: this.spec.batchWaitMs,
        });
        await this.pull(this.inbox);
        backoff = MIN_BACKOFF_MS;
      } catch (error) {
        // NATS away, the stream or consumer deleted under us: bind again once it is back.
        subject = undefined;
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        if (this.running) {
          this.logger.warn({ msg: 'consumer failed; retrying', err: String(error), retry_in_ms: backoff });
          await this.pause(backoff);
        }
      }
    }
  }

  /** Makes sure the streams and the durable exist; answers the subject its pull requests go to. */
  private async bind(): Promise<string> {
    const connection = this.bus.connection();
    const { name: stream, manager } = await ensureStream(
      connection,
      this.bus.namespace,
      this.spec.stream,
      this.bus.streamReplicas,
    );
    await ensureStream(connection, this.bus.namespace, Streams.deadLetters, this.bus.streamReplicas);
    await this.ensureConsumer(manager, stream);
    return `$JS.API.CONSUMER.MSG.NEXT.${stream}.${this.spec.durable}`;
  }

  private async ensureConsumer(manager: JetStreamManager, stream: string): Promise<void> {
    const { durable } = this.spec;
    const settings = {
      ack_wait: nanos(this.spec.ackWaitMs ?? 30_000),
      // Retried until processed, or set aside in the dead-letter stream; never dropped.
      max_deliver: -1,
      ...(this.spec.maxAckPending ? { max_ack_pending: this.spec.maxAckPending } : {}),
    };
    const exists = await manager.consumers.info(stream, durable).then(
      () => true,
      (error: unknown) => {
        if ((error as NatsError).api_error?.err_code === CONSUMER_NOT_FOUND) return false;
        throw error;
      },
    );
    if (exists) {
      await manager.consumers.update(stream, durable, settings);
      return;
    }
    await manager.consumers
      .add(stream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ...(this.spec.filterSubject
          ? { filter_subject: namespaced(this.bus.namespace, this.spec.filterSubject) }
          : {}),
        ...settings,
      })
      .catch(async (error: unknown) => {
        // Another replica created it between our lookup and our add.
        await manager.consumers.info(stream, durable).catch(() => {
          throw error;
        });
      });
  }

  /**
   * Pull requests, each open for up to `batchWaitMs`, the next asked for as soon as the last ended
   * and its messages are settled. Messages are processed as they arrive, in batches of whatever
   * has arrived meanwhile (up to `batchSize`): under load batches fill while the previous one is
   * processed. A batch short of `batchSize` waits `lingerMs` (if set) for what arrives meanwhile.
   */
  private async pull(inbox: PullInbox): Promise<void> {
    const { batchSize, lingerMs } = this.spec;
    while (this.running) {
      const messages = await inbox.take();
      if (lingerMs && messages.length > 0 && messages.length < batchSize && this.running) {
        await this.pause(lingerMs);
        messages.push(...inbox.takeDelivered(batchSize - messages.length));
      }
      if (messages.length > 0) await this.settle(messages);
    }
  }

  private async settle(messages: JsMsg[]): Promise<void> {
    const batch: Delivery<T>[] = [];
    const settling: Array<Promise<void>> = [];
    for (const message of messages) {
      const decoded = this.spec.decode(message);
      if ('problem' in decoded) settling.push(this.setAside(message, `malformed: ${decoded.problem}`));
      else batch.push({ message, value: decoded.value });
    }
    if (batch.length > 0) {
      let outcomes: Outcome[];
      try {
        outcomes = await (tracing.enabled ? this.processTraced(batch) : this.spec.process(batch));
      } catch (error) {
        const retryInMs = this.spec.retryDelayMs ?? MAX_BACKOFF_MS;
        this.logger.warn({ msg: 'batch not processed; retrying', count: batch.length, err: String(error) });
        outcomes = batch.map(() => ({ retryInMs }));
      }
      this.logger.debug({ msg: 'batch processed', count: batch.length });
      batch.forEach(({ message }, i) => {
        const outcome = outcomes[i] ?? { retryInMs: this.spec.retryDelayMs ?? MAX_BACKOFF_MS };
        if (outcome === 'ack') message.ack();
        else if ('retryInMs' in outcome) message.nak(outcome.retryInMs);
        else settling.push(this.setAside(message, outcome.deadLetter));
      });
    }
    await Promise.all(settling);
  }

  /**
   * A batch in a consumer span. A batch of one continues its message's trace (the request that
   * published it); a larger one, which several traces fed, starts its own and links to each.
   */
  private processTraced(batch: Delivery<T>[]): Promise<Outcome[]> {
    const contexts = batch.map(({ message }) => traceContextOf(message.headers));
    return inSpan(
      `process ${this.spec.stream.subjects.replace(/\.>$/, '')}`,
      {
        kind: SpanKind.CONSUMER,
        parent: contexts.length === 1 ? contexts[0] : ROOT_CONTEXT,
        links: contexts.length === 1 ? [] : linksTo(contexts),
        attributes: {
          ...messagingAttributes('process', this.spec.stream.name),
          'messaging.consumer.group.name': this.spec.durable,
          'messaging.batch.message_count': batch.length,
        },
      },
      () => this.spec.process(batch),
    );
  }

  /** Moves a message to the dead-letter stream; if even that fails (NATS away) it comes back later. */
  private async setAside(message: JsMsg, reason: string): Promise<void> {
    try {
      await deadLetter(this.bus, message, this.spec.durable, reason);
      this.deadLettered += 1;
      Metrics.deadLettered.inc({ durable: this.spec.durable });
      // warn, not error: the shared NestPinoLogger prints an object given to error() as "[object Object]".
      this.logger.warn({
        msg: 'message set aside in the dead-letter stream',
        subject: message.subject,
        stream_seq: message.seq,
        reason,
      });
    } catch (error) {
      this.logger.warn({ msg: 'could not set a message aside; it will come back', err: String(error) });
      message.nak(this.spec.retryDelayMs ?? MAX_BACKOFF_MS);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
