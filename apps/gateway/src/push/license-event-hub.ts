import { ServerResponse } from 'node:http';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { AckPolicy, ConsumerMessages, DeliverPolicy, JsMsg, nanos } from 'nats';
import {
  Broadcasts,
  LICENSE_EVENTS_FILTER,
  LicenseStatusEventRecord,
  Streams,
  licenseEventsFilter,
  parseEventSubject,
} from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import {
  BusClient,
  Readiness,
  decodeMessage,
  ensureStream,
  namespaced,
  streamName,
} from '@licensing/shared/messaging';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { SSE_HEARTBEAT, pushedView, sseFrame } from './sse';

/** One shared comment to every connection this often: no timer per connection. */
export const HEARTBEAT_MS = 20_000;
/**
 * A connection is closed after about this long (checked at the heartbeat) and the client
 * reconnects with Last-Event-ID, losing nothing. (A revoked credential's streams end at once.)
 */
const MAX_CONNECTION_AGE_MS = 60 * 60_000;
/** At most this many of an organization's license events are replayed on a resume; more is a reset. */
export const MAX_REPLAY = 5_000;
/** A client that reads nothing while this much is queued for it is cut off, not buffered for ever. */
const MAX_QUEUED_BYTES = 256 * 1024;
/** The reconnection delay the stream suggests to clients (the SSE `retry:` field). */
const RETRY_MS = 2_000;
/** How long a stream waits for an idle gateway to start reading the license events before it is refused. */
const FEED_START_TIMEOUT_MS = 5_000;
/** How long NATS keeps the feed's consumer once nobody pulls from it (the library's default is 5 min). */
const FEED_CONSUMER_INACTIVE_MS = 30_000;
const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

interface Connection {
  orgId: string;
  /** Its index keys (`<org> <serial>`). */
  keys: string[];
  response: ServerResponse;
  /** The SHA-256 of the credential that opened it: revoking that credential ends the stream. */
  credentialHash: string;
  /** The stream sequence up to which this connection has everything that concerns it. */
  cursor: number;
  /** Live events that arrived while its replay ran: sent after it, those past the cursor. */
  held?: { seq: number; frame: string }[];
  closeAt: number;
}

export interface OpenStream {
  orgId: string;
  /** The SHA-256 of the bearer credential (API key or token) the stream is opened with. */
  credentialHash: string;
  serials: string[];
  /** The client's Last-Event-ID: undefined for a first connection, NaN when unreadable. */
  lastEventId: number | undefined;
}

/**
 * Pushes license status changes to connected applications (GET /licenses/events, Server-Sent
 * Events). Each gateway reads the LICENSE_EVENTS stream once, with one ordered consumer of every
 * organization's license events, and fans each event out through an in-memory index of
 * (organization, serial) → connections: any replica serves any connection, and a connection costs
 * a socket and an index entry, no NATS subscription and no timer. Event ids are the stream
 * sequences, so a client that reconnects with Last-Event-ID gets what it missed replayed from the
 * stream (its organization's license events only), or a `reset` when that is more than the stream
 * still holds or than MAX_REPLAY.
 *
 * A gateway reads the license events only while it serves a stream (and PUSH_FEED_IDLE_MS after its
 * last one closed): replicas nobody streams from, and every replica of a platform whose
 * applications do not stream, receive nothing. The first stream binds the feed at the stream's end
 * before it is answered; what happened while nobody read is what a resuming client replays.
 */
@Injectable()
export class LicenseEventHub implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(LicenseEventHub.name);
  private readonly index = new Map<string, Set<Connection>>();
  private readonly connections = new Set<Connection>();
  /** The last stream sequence the live consumer has handed over; undefined until it first binds. */
  private position: number | undefined;
  private live = false;
  /** Whether the feed should be read: a stream is open, or was within PUSH_FEED_IDLE_MS. */
  private feedWanted = false;
  private idleTimer?: ReturnType<typeof setTimeout>;
  /** Streams waiting for the feed to be bound. */
  private readonly liveWaiters = new Set<() => void>();
  private stopping = false;
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;
  private heartbeat?: ReturnType<typeof setInterval>;
  private wake?: () => void;

  private readonly idleMs: number;

  constructor(
    private readonly bus: BusClient,
    private readonly readiness: Readiness,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.idleMs = config.PUSH_FEED_IDLE_MS;
  }

  /** Connections open now (for /metrics and the benchmark). */
  get size(): number {
    return this.connections.size;
  }

  /** Whether this gateway reads the license events now (bound, positioned, not shutting down). */
  get reading(): boolean {
    return this.live && this.position !== undefined && !this.stopping;
  }

  onApplicationBootstrap(): void {
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
    // A revoked API key or token stops streaming at once, on every gateway.
    this.bus.subscribe(Broadcasts.apiKeyRevoked, ({ key_hash }) => this.revoked(key_hash));
    this.bus.subscribe(Broadcasts.tokenRevoked, ({ token_hash }) => this.revoked(token_hash));
  }

  /** Ends every stream opened with the credential of this hash. */
  private revoked(credentialHash: string): void {
    for (const connection of [...this.connections]) {
      if (connection.credentialHash === credentialHash) this.close(connection);
    }
  }

  /**
   * After the readiness drain (load balancers have moved new connections elsewhere), every stream
   * is ended: its client reconnects to another replica with its Last-Event-ID. Ended here, before
   * Nest closes the HTTP server, which would otherwise wait for them.
   */
  async beforeApplicationShutdown(signal?: string): Promise<void> {
    await this.readiness.drained(signal);
    this.stopping = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.idleTimer);
    this.notifyLive();
    for (const connection of [...this.connections]) this.close(connection);
    this.stopFeed();
    await this.loop;
  }

  /**
   * Makes sure this gateway reads the license events, binding the feed if it was idle, or refuses
   * the stream (before anything is answered) when it cannot.
   */
  async accept(): Promise<void> {
    if (!this.stopping) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
      this.startFeed();
      if (!this.reading) await this.untilLive(FEED_START_TIMEOUT_MS);
      // Should no stream follow (refused here, or the client gone), the feed still goes idle.
      this.idleLater();
    }
    if (!this.reading) {
      throw new DomainError('unavailable', 'License events are not available on this gateway; retry');
    }
  }

  /** Serves one stream on `response`, already answered 200 with the event-stream headers. */
  async open(response: ServerResponse, stream: OpenStream): Promise<void> {
    if (this.stopping) {
      response.end();
      return;
    }
    const connection: Connection = {
      orgId: stream.orgId,
      keys: stream.serials.map((serial) => keyOf(stream.orgId, serial)),
      response,
      credentialHash: stream.credentialHash,
      cursor: this.position ?? 0,
      held: stream.lastEventId === undefined ? undefined : [],
      closeAt: Date.now() + MAX_CONNECTION_AGE_MS * (1 + Math.random() / 4),
    };
    this.add(connection);
    response.on('close', () => this.remove(connection));
    response.write(`retry: ${RETRY_MS}\n\n`);
    if (stream.lastEventId !== undefined) await this.resume(connection, stream.lastEventId);
    // The current position as an id, so that a client that has seen no event yet resumes from here.
    this.write(connection, sseFrame('ready', connection.cursor, { serials: stream.serials.length }));
  }

  private add(connection: Connection): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.connections.add(connection);
    for (const key of connection.keys) {
      let followers = this.index.get(key);
      if (!followers) this.index.set(key, (followers = new Set()));
      followers.add(connection);
    }
  }

  private remove(connection: Connection): void {
    if (!this.connections.delete(connection)) return;
    for (const key of connection.keys) {
      const followers = this.index.get(key);
      followers?.delete(connection);
      if (followers?.size === 0) this.index.delete(key);
    }
    this.idleLater();
  }

  private close(connection: Connection): void {
    this.remove(connection);
    connection.response.end();
  }

  private write(connection: Connection, frame: string): void {
    const { response } = connection;
    if (response.writableEnded || response.destroyed) return;
    if (response.writableLength > MAX_QUEUED_BYTES) {
      this.remove(connection);
      response.destroy();
      return;
    }
    response.write(frame);
  }

  private beat(): void {
    const now = Date.now();
    for (const connection of this.connections) {
      if (now >= connection.closeAt) this.close(connection);
      else this.write(connection, SSE_HEARTBEAT);
    }
  }

  /** Delivers one live event to the connections that follow its serial. */
  private dispatch(message: JsMsg): void {
    this.position = message.seq;
    // Nobody follows anything: nothing to decode (most gateways, most of the time, under creates).
    if (this.index.size === 0) return;
    const orgId = parseEventSubject(message.subject, this.bus.namespace)?.orgId;
    const event = decodeEvent(message);
    if (!event || !orgId || event.org_id !== orgId) return;
    const view = pushedView(event.type, event.occurred_at, event.data);
    if (!view) return;
    const followers = this.index.get(keyOf(orgId, view.serial));
    if (!followers) return;
    const frame = sseFrame(view.type, message.seq, view);
    for (const connection of followers) {
      if (connection.held) connection.held.push({ seq: message.seq, frame });
      else if (message.seq > connection.cursor) {
        connection.cursor = message.seq;
        this.write(connection, frame);
      }
    }
  }

  /**
   * Sends what the connection missed since `lastEventId`, then the live events held meanwhile.
   * The connection was indexed before the stream was read, so every event after the stream's
   * last sequence read here reaches it live: nothing falls between the two.
   */
  private async resume(connection: Connection, lastEventId: number): Promise<void> {
    let reset: string | undefined;
    try {
      reset = await this.replay(connection, lastEventId);
    } catch (error) {
      this.logger.warn({
        msg: 'license event replay failed; the client is told to re-check',
        err: String(error),
      });
      reset = 'replay_failed';
    }
    if (reset) this.write(connection, sseFrame('reset', connection.cursor, { reason: reset }));
    const held = connection.held ?? [];
    connection.held = undefined;
    for (const { seq, frame } of held) {
      if (seq <= connection.cursor) continue;
      connection.cursor = seq;
      this.write(connection, frame);
    }
  }

  /** Replays from the stream; answers why it could not (the client must then re-check its licenses). */
  private async replay(connection: Connection, lastEventId: number): Promise<string | undefined> {
    const nats = this.bus.connection();
    const stream = streamName(this.bus.namespace, Streams.events.name);
    const manager = await nats.jetstreamManager();
    const { state } = await manager.streams.info(stream);
    connection.cursor = state.last_seq;
    if (Number.isNaN(lastEventId) || lastEventId > state.last_seq) return 'unknown_event_id';
    if (lastEventId === state.last_seq) return undefined;
    if (lastEventId + 1 < state.first_seq) return 'gap_too_old';

    const subject = namespaced(this.bus.namespace, licenseEventsFilter(connection.orgId));
    const consumer = await manager.consumers.add(stream, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: lastEventId + 1,
      filter_subject: subject,
      mem_storage: true,
      num_replicas: 1,
      inactive_threshold: nanos(30_000),
    });
    try {
      if (consumer.num_pending > MAX_REPLAY) return 'gap_too_large';
      if (consumer.num_pending === 0) return undefined;
      const messages = await nats
        .jetstream()
        .consumers.get(stream, consumer.name)
        .then((replay) => replay.fetch({ max_messages: consumer.num_pending, expires: 5_000 }));
      let reached = lastEventId;
      let complete = false;
      for await (const message of messages) {
        reached = message.seq;
        const event = decodeEvent(message);
        const view = event && pushedView(event.type, event.occurred_at, event.data);
        if (view && connection.keys.includes(keyOf(connection.orgId, view.serial))) {
          this.write(connection, sseFrame(view.type, message.seq, view));
        }
        if (message.info.pending === 0) {
          complete = true;
          break;
        }
      }
      // Fewer messages than the consumer counted (the fetch expired): a gap the client must fill.
      if (!complete) return 'replay_failed';
      connection.cursor = Math.max(connection.cursor, reached);
      return undefined;
    } finally {
      await manager.consumers.delete(stream, consumer.name).catch(() => undefined);
    }
  }

  private startFeed(): void {
    this.feedWanted = true;
    if (this.loop || this.stopping) return;
    this.loop = this.run().finally(() => {
      this.loop = undefined;
      // Wanted again after its loop had decided to end: start over.
      if (this.feedWanted && !this.stopping) this.startFeed();
    });
  }

  private stopFeed(): void {
    this.feedWanted = false;
    this.messages?.stop();
    this.wake?.();
  }

  /** Once no stream is open, the feed stops after PUSH_FEED_IDLE_MS (unless a stream opens meanwhile). */
  private idleLater(): void {
    if (this.connections.size > 0 || this.idleTimer || !this.feedWanted) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.connections.size === 0) this.stopFeed();
    }, this.idleMs);
    this.idleTimer.unref();
  }

  private untilLive(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.liveWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.liveWaiters.add(done);
    });
  }

  private notifyLive(): void {
    for (const done of [...this.liveWaiters]) done();
  }

  /**
   * Reads every organization's license events from the stream's end while the feed is wanted.
   * After a failure it binds again from the last sequence it handed over, so no event is skipped.
   */
  private async run(): Promise<void> {
    let backoff = MIN_BACKOFF_MS;
    while (!this.stopping && this.feedWanted) {
      try {
        const nats = this.bus.connection();
        const { name, manager } = await ensureStream(
          nats,
          this.bus.namespace,
          Streams.events,
          this.bus.streamReplicas,
        );
        this.position ??= (await manager.streams.info(name)).state.last_seq;
        const consumer = await nats.jetstream().consumers.get(name, {
          filterSubjects: namespaced(this.bus.namespace, LICENSE_EVENTS_FILTER),
          opt_start_seq: this.position + 1,
          // Once the feed stops, the server drops its consumer this long after the last pull.
          inactive_threshold: FEED_CONSUMER_INACTIVE_MS,
        });
        this.messages = await consumer.consume();
        this.live = true;
        this.notifyLive();
        backoff = MIN_BACKOFF_MS;
        if (this.stopping || !this.feedWanted) this.messages.stop();
        for await (const message of this.messages) this.dispatch(message);
      } catch (error) {
        if (!this.stopping && this.feedWanted) {
          this.logger.warn({ msg: 'license event feed failed; binding again', err: String(error) });
        }
      }
      this.live = false;
      if (this.stopping || !this.feedWanted) break;
      await this.pause(backoff);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
    // Idle: nobody to hand anything to. The next feed starts from the stream's end; a client that
    // resumes replays what it missed from the stream itself.
    this.position = undefined;
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

const keyOf = (orgId: string, serial: string): string => `${orgId} ${serial}`;

/** A license event as the hub reads it, or undefined for one it cannot read (it pushes nothing for it). */
function decodeEvent(message: JsMsg): LicenseStatusEventRecord | undefined {
  const decoded = decodeMessage(LicenseStatusEventRecord, message.data);
  return 'value' in decoded ? decoded.value : undefined;
}
