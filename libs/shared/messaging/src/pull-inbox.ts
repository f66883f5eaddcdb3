import {
  Events,
  JsMsg,
  Msg,
  NatsConnection,
  QueuedIterator,
  Status,
  Subscription,
  createInbox,
  nanos,
} from 'nats';
// nats.js's own wrapper of a delivered message (ack, nak, seq, headers); not re-exported by 'nats'.
import { toJsMsg } from 'nats/lib/jetstream/jsmsg';

/** How long an ack waits for JetStream's confirmation when one is asked for (nats.js's default). */
const ACK_TIMEOUT_MS = 5_000;
/** Past a pull's expiry, how long before asking whether the server still answers at all. */
const UNANSWERED_AFTER_MS = 1_000;

interface PullSpec {
  /** `$JS.API.CONSUMER.MSG.NEXT.<stream>.<durable>`. */
  subject: string;
  /** Messages per pull request. */
  batch: number;
  /** How long the server keeps a pull request open. */
  expiresMs: number;
}

interface OpenPull {
  reply: string;
  remaining: number;
  deadline: number;
}

/**
 * The pull requests of one durable consumer, all answered on one inbox subscription that stays
 * open as long as the consumer runs — across pulls, and across re-binds while NATS is away.
 *
 * Why not nats.js's `fetch()`: it ends a pull on a timer of its own, 5 % after the pull's expiry,
 * and unsubscribes its inbox at once. The server counts the expiry from when it read the request,
 * so a busy server reads it late, and a busy client reads its socket late (Node runs due timers
 * before it reads sockets): either way the client can give up on a pull the server still serves,
 * and what the server sends it meanwhile is dropped by the client — JetStream sends it again only
 * when the ack wait ends. Here a message is taken whichever pull it answers, and a pull counts as
 * ended only when the server says so (or after its last message); the subscription is drained
 * when the consumer stops, so the server's last deliveries still arrive, and nats-server delivers
 * nothing to a pull request whose reply subject nobody listens to any more.
 *
 * Each pull has a reply subject of its own under the inbox (`<inbox>.<n>`). JetStream delivers the
 * messages under their own subjects, but answers with a status (`408 Request Timeout` at expiry,
 * `409 Consumer Deleted`…) on the reply subject, so a status tells which pull it ends; one pull is
 * open at a time, so messages count towards it. A status of an earlier pull is of no consequence.
 */
export class PullInbox {
  private readonly inbox: string;
  private readonly subscription: Subscription;
  /** Delivered, not yet taken. */
  private readonly received: JsMsg[] = [];
  private pulls = 0;
  private open?: OpenPull;
  /** Why the consumer must bind again: thrown by the next take(). */
  private failure?: Error;
  private woken = false;
  private notify?: () => void;
  private readonly statuses: QueuedIterator<Status>;

  constructor(
    private readonly connection: NatsConnection,
    private readonly spec: PullSpec,
  ) {
    this.inbox = createInbox();
    this.subscription = connection.subscribe(`${this.inbox}.*`, {
      callback: (error, message) => (error ? this.fail(error) : this.receive(message)),
    });
    // Typed as a bare AsyncIterable, it is a QueuedIterator, which close() must stop.
    this.statuses = connection.status() as QueuedIterator<Status>;
    void this.followReconnects();
  }

  /**
   * The messages in hand (at most a batch), once there are any: asks for more when the last pull
   * has ended and everything it brought was taken, then waits for a message, the pull's end, or
   * `wake()` (answering nothing then). Throws when the consumer must bind again: JetStream said
   * the pull can never be served (consumer deleted…), NATS reconnected (a restarted server lost
   * the pull, perhaps the consumer too), or the server let the pull go unanswered past its expiry.
   */
  async take(): Promise<JsMsg[]> {
    if (!this.open && this.received.length === 0 && !this.failure) this.request();
    while (this.received.length === 0 && this.open && !this.failure && !this.woken) {
      const pull = this.open;
      if (!(await this.waitUntil(pull.deadline)) && this.open === pull) await this.checkAnswered(pull);
    }
    this.woken = false;
    const failure = this.failure;
    if (failure) {
      this.failure = undefined;
      this.open = undefined;
      throw failure;
    }
    return this.received.splice(0, this.spec.batch);
  }

  /** Up to `max` messages delivered and not yet taken, without waiting or asking for more. */
  takeDelivered(max: number): JsMsg[] {
    return this.received.splice(0, max);
  }

  /** Makes a waiting take() return at once (to stop). */
  wake(): void {
    this.woken = true;
    this.notify?.();
  }

  /**
   * Unsubscribes once the server has read the unsubscribe (a drain), and answers what was delivered
   * and not taken, the last deliveries included.
   */
  async close(): Promise<JsMsg[]> {
    this.statuses.stop();
    await this.subscription.drain().catch(() => this.subscription.unsubscribe());
    return this.received.splice(0);
  }

  private request(): void {
    this.pulls += 1;
    const reply = `${this.inbox}.${this.pulls}`;
    this.open = {
      reply,
      remaining: this.spec.batch,
      deadline: Date.now() + this.spec.expiresMs + UNANSWERED_AFTER_MS,
    };
    this.connection.publish(
      this.spec.subject,
      JSON.stringify({ batch: this.spec.batch, expires: nanos(this.spec.expiresMs) }),
      { reply },
    );
  }

  private receive(message: Msg): void {
    if (!message.subject.startsWith(`${this.inbox}.`)) {
      this.received.push(toJsMsg(message, ACK_TIMEOUT_MS));
      if (this.open && --this.open.remaining === 0) this.open = undefined;
    } else if (message.subject === this.open?.reply) {
      this.status(message);
    } else {
      return;
    }
    this.notify?.();
  }

  /** A status on the open pull's reply subject: its end, or a reason to bind again. */
  private status(message: Msg): void {
    const code = message.headers?.code ?? 0;
    const description = message.headers?.description.toLowerCase() ?? '';
    // 1xx: heartbeats, which these pulls do not ask for.
    if (code < 300) return;
    this.open = undefined;
    // 404 No Messages, 408 Request Timeout: the pull ended, served or not. Anything else (409
    // consumer deleted, too many pulls waiting, a leader that moved; 400; 503) is a reason to bind
    // again, after a backoff rather than in a loop of refused pulls.
    if (code === 404 || code === 408) return;
    this.fail(new Error(`pull request refused: ${code} ${description}`));
  }

  /**
   * The pull's expiry is past and no end came. First a round trip (PING/PONG) to read whatever the
   * server sent before — a busy client may not have read the end yet; still nothing means the
   * server lost the pull (the consumer deleted and created again, say), so bind again. The round
   * trip is bounded, and wake() cuts it short: while NATS is away it would wait for its return.
   */
  private async checkAnswered(pull: OpenPull): Promise<void> {
    const flushed = this.connection.flush().then(
      () => true,
      () => false,
    );
    const answered = await Promise.race([
      flushed,
      this.waitUntil(Date.now() + this.spec.expiresMs).then(() => false),
    ]);
    this.notify?.(); // ends the wait if the round trip won, and its timer
    if (this.woken || this.failure || this.open !== pull || this.received.length > 0) return;
    this.fail(new Error(answered ? 'pull request unanswered past its expiry' : 'NATS does not answer'));
  }

  private fail(error: Error): void {
    this.failure = error;
    this.notify?.();
  }

  private async followReconnects(): Promise<void> {
    for await (const status of this.statuses) {
      if (status.type === Events.Reconnect)
        this.fail(new Error('NATS reconnected; pull requests may be lost'));
    }
  }

  /** Resolves true when something happens, false at the deadline. */
  private waitUntil(deadline: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
      this.notify = () => {
        clearTimeout(timer);
        this.notify = undefined;
        resolve(true);
      };
    });
  }
}
