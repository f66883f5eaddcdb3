import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { Streams } from '@licensing/contracts';
import { BusClient, ensureStream } from '@licensing/shared/messaging';
import { Metrics } from '@licensing/shared/metrics';
import { inTraceOf, tracing } from '@licensing/shared/tracing';
import { OutboxEventEntity } from './outbox-event.entity';
import { OutboxMessage, outboxMessages } from './outbox-messages';
import { OutboxRow, outboxChannel } from './outbox-signal';

const BATCH_SIZE = 100;
/** Without a notification (the listening connection lost one), the outbox is still looked at this often. */
const SAFETY_POLL_MS = 5_000;
const MIN_BACKOFF_MS = 100;
const RELISTEN_MS = 1_000;
const LISTEN_CONNECT_TIMEOUT_MS = 5_000;
const LISTEN_KEEPALIVE_MS = 10_000;

/**
 * Drains the outbox to JetStream, oldest first, woken by the commit that filled it: a writer
 * signals the outbox inside its transaction (`pg_notify`, which PostgreSQL delivers at commit and
 * only then), and every replica's relay listens on its own connection. A notification missed
 * (that connection lost, a relay busy) costs at most SAFETY_POLL_MS, never an event. Replicas
 * share the work: each batch is claimed with FOR UPDATE SKIP LOCKED and deleted in the same
 * transaction once JetStream has acknowledged every event of it. If the process dies between the
 * acknowledgement and the commit, the batch is published again and JetStream drops the copies
 * (the event id is the Nats-Msg-Id). The audit entries of a batch go out one message per
 * organization (`outboxMessages`).
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  /** Set by a notification; cleared when a drain starts, so one that arrives during a drain is not lost. */
  private signalled = false;
  private listener?: Client;
  private relisten?: NodeJS.Timeout;
  private unmeasure?: () => void;

  private readonly takeBatch: string;
  private readonly pendingOn: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: BusClient,
  ) {
    const table = dataSource.getMetadata(OutboxEventEntity).tablePath;
    this.takeBatch = `DELETE FROM ${table} WHERE seq IN (
                        SELECT seq FROM ${table} ORDER BY seq LIMIT ${BATCH_SIZE} FOR UPDATE SKIP LOCKED)
                      RETURNING seq, id, subject, payload, trace_context AS "traceContext"`;
    this.pendingOn = `SELECT id, subject, payload FROM ${table}
                       WHERE subject = $1 AND payload LIKE $2 ESCAPE '\\' ORDER BY seq`;
  }

  async onApplicationBootstrap(): Promise<void> {
    // Both streams the outbox feeds must exist before its first publication.
    await ensureStream(this.bus.connection(), this.bus.namespace, Streams.events, this.bus.streamReplicas);
    await ensureStream(this.bus.connection(), this.bus.namespace, Streams.audit, this.bus.streamReplicas);
    this.running = true;
    await this.listen();
    this.loop = this.run();
    // The backlog on /metrics: one count of the outbox at scrape time (normally a handful of rows).
    const labels = { schema: String((this.dataSource.options as { schema?: string }).schema) };
    this.unmeasure = Metrics.outboxBacklog.addSource(async (sample) =>
      sample(labels, await this.dataSource.getRepository(OutboxEventEntity).count()),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.unmeasure?.();
    this.running = false;
    clearTimeout(this.relisten);
    this.wake?.();
    await this.loop;
    await this.listener?.end().catch(() => undefined);
  }

  /** LISTEN on a connection of its own (a pooled one would be lent out); on its loss, listen again. */
  private async listen(): Promise<void> {
    const options = this.dataSource.options as { url?: string; schema?: string };
    const client = new Client({
      connectionString: options.url,
      application_name: `${options.schema}-outbox`,
      // A server that never answers (a partition, a dead endpoint) must not leave the relay
      // polling for good: the connect gives up, and a silent connection is found by keepalives.
      connectionTimeoutMillis: LISTEN_CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: LISTEN_KEEPALIVE_MS,
    });
    const again = (error?: unknown) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      client.removeAllListeners();
      void client.end().catch(() => undefined);
      if (!this.running) return;
      this.logger.warn({ msg: 'outbox listener lost; polling until it is back', err: String(error) });
      this.relisten = setTimeout(() => void this.listen(), RELISTEN_MS);
    };
    this.listener = client;
    client.on('notification', () => this.signal());
    client.on('error', again);
    client.on('end', () => again('connection ended'));
    try {
      await client.connect();
      await client.query(`LISTEN "${outboxChannel(options.schema)}"`);
      // Rows committed while nobody listened are drained now.
      this.signal();
    } catch (error) {
      again(error);
    }
  }

  /**
   * Whether this relay is running: a writer of this process may then commit outbox rows without
   * `pg_notify` and call `signal()` once committed (the license create does: a notification makes
   * PostgreSQL serialize the commits of every notifying transaction, bench/README.md).
   */
  get isRunning(): boolean {
    return this.running;
  }

  /** Drains now (or right after the drain in progress): called by notifications and by local writers. */
  signal(): void {
    this.signalled = true;
    this.wake?.();
  }

  /** Publishes everything pending now; answers how many events went out. Used by the loop and by tests. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const published = await this.publishBatch();
      total += published;
      if (published < BATCH_SIZE) return total;
    }
  }

  /**
   * Publishes committed outbox rows now, ahead of the relay: for a change whose event must be in
   * the stream before it answers. The relay publishes the same rows later with the same message
   * ids, and JetStream drops those copies (its duplicate window is 10 minutes; a copy later than
   * that reaches consumers twice, and they apply events by id or by version). It takes no lock, so a
   * relay that holds the rows (one cut off by a partition, say) never delays it. Throws when
   * JetStream cannot be reached.
   */
  async publishNow(rows: readonly OutboxRow[]): Promise<void> {
    await Promise.all(rows.map((row) => this.publish({ ...row, traceContext: null })));
  }

  /**
   * The rows still in the outbox on `subject` whose payload holds `text` (a license id, say), with
   * no lock: those a relay holds but has not published yet are among them.
   */
  async pending(subject: string, text: string): Promise<OutboxRow[]> {
    const literal = text.replace(/[\\%_]/g, (char) => `\\${char}`);
    return (await this.dataSource.query(this.pendingOn, [subject, `%${literal}%`])) as OutboxRow[];
  }

  private async run(): Promise<void> {
    let backoff = MIN_BACKOFF_MS;
    while (this.running) {
      let delay = SAFETY_POLL_MS;
      this.signalled = false;
      try {
        await this.drain();
        backoff = MIN_BACKOFF_MS;
      } catch (error) {
        backoff = Math.min(backoff * 2, SAFETY_POLL_MS);
        delay = backoff;
        this.signalled = false; // a retry waits for its backoff, notified or not
        this.logger.warn({ msg: 'outbox relay failed; retrying', err: String(error), retry_in_ms: backoff });
      }
      await new Promise<void>((resolve) => {
        if (this.signalled || !this.running) return resolve();
        const timer = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Traced, a message is published in the trace of the request that recorded its (first) row. */
  private publish(message: OutboxMessage): Promise<void> {
    const publish = () => this.bus.publishDurable(message.subject, message.payload, message.id);
    return tracing.enabled && message.traceContext
      ? inTraceOf(JSON.parse(message.traceContext), publish)
      : publish();
  }

  /**
   * Takes the oldest batch nobody else holds (deleted in this transaction, so locked until it
   * commits), publishes it, and commits: one statement besides BEGIN and COMMIT. A failed
   * publication rolls the deletion back, and the batch is published again.
   */
  private publishBatch(): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      // Structured: TypeORM answers a bare DELETE … RETURNING as [rows, count].
      const taken = (await manager.queryRunner!.query(this.takeBatch, [], true)) as {
        records: OutboxEventEntity[];
      };
      const rows = taken.records.sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
      // All at once, in order: nats.js writes them in call order on one connection and the stream
      // stores them in the order received, so a batch waits for one round of acknowledgements
      // instead of one per message. If one fails, the batch is published again and JetStream drops
      // the copies of those it had stored (the same rows make the same message ids).
      await Promise.all(outboxMessages(rows).map((message) => this.publish(message)));
      return rows.length;
    });
  }
}
