import { ErrorCode, Msg, MsgHdrs, NatsConnection, NatsError, Subscription, createInbox } from 'nats';

interface Waiter {
  resolve(message: Msg): void;
  reject(error: Error): void;
  deadline: number;
}

/** How often waits past their deadline are failed: a timeout fires at most this much late. */
const SWEEP_MS = 50;

/**
 * Request/reply over one subscription to a private inbox, for the bus's hot paths. Each request is
 * published with the reply subject `<inbox>.<token>` and waits in a map; one timer fails the waits
 * whose deadline has passed.
 * nats.js's own `request()` does the same with a timer, a closure and two or three `NatsError`s
 * built for every call, answered or not (bench/README.md has what that cost).
 */
export class ReplyInbox {
  private readonly pending = new Map<string, Waiter>();
  private readonly prefix = `${createInbox()}.`;
  private readonly subscription: Subscription;
  private readonly sweeper: NodeJS.Timeout;
  private sequence = 0;

  constructor(
    private readonly connection: NatsConnection,
    private readonly timeoutMs: number,
  ) {
    this.subscription = connection.subscribe(`${this.prefix}*`, {
      callback: (error, message) => {
        if (!error) this.settle(message);
      },
    });
    this.sweeper = setInterval(() => this.expire(Date.now()), SWEEP_MS).unref();
  }

  /**
   * Publishes `payload` to `subject` and resolves with the reply. Rejects with nats.js's own
   * `NoResponders` when no subscriber exists (NATS says so at once) and `Timeout` after `timeoutMs`
   * (the inbox's own unless given).
   * `headers` (a trace's context) go with the request when given.
   */
  request(subject: string, payload: Uint8Array, headers?: MsgHdrs, timeoutMs = this.timeoutMs): Promise<Msg> {
    const token = (this.sequence++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      this.pending.set(token, { resolve, reject, deadline: Date.now() + timeoutMs });
      try {
        this.connection.publish(subject, payload, { reply: this.prefix + token, headers });
      } catch (error) {
        this.pending.delete(token);
        reject(error as Error);
      }
    });
  }

  /** Stops waiting: every request still waiting fails as timed out. */
  close(): void {
    clearInterval(this.sweeper);
    this.subscription.unsubscribe();
    this.expire(Number.POSITIVE_INFINITY);
  }

  /** Fails every request still waiting with `error`, at once. Later requests wait as before. */
  failAll(error: Error): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const waiter of waiting) waiter.reject(error);
  }

  private settle(message: Msg): void {
    const token = message.subject.slice(this.prefix.length);
    const waiter = this.pending.get(token);
    if (!waiter) return; // Answered after its deadline: the caller has already been told.
    this.pending.delete(token);
    if (message.data.length === 0 && message.headers?.code === 503) {
      waiter.reject(NatsError.errorForCode(ErrorCode.NoResponders));
    } else {
      waiter.resolve(message);
    }
  }

  private expire(now: number): void {
    // Every wait is looked at: deadlines are not in the order of the map (a message may have a
    // longer timeout of its own, such as key-pair creation's 30 s).
    for (const [token, waiter] of this.pending) {
      if (waiter.deadline > now) continue;
      this.pending.delete(token);
      waiter.reject(NatsError.errorForCode(ErrorCode.Timeout));
    }
  }
}
