// Push revocation: the application follows its licenses over Server-Sent Events
// (GET /v1/licenses/events), read with fetch's streaming body so that the same code runs in Node
// and browsers (an EventSource cannot send the API key), reconnecting with Last-Event-ID.

import { LicenseClientError } from './license-client';

/** One event of a text/event-stream, as the format defines it. */
export interface ServerSentEvent {
  /** The `event` field; `message` when the event names none. */
  event: string;
  data: string;
  /** The last event id in effect when this event was dispatched (ids carry over, as in EventSource). */
  id: string | undefined;
}

/**
 * Reads the text/event-stream format incrementally: feed it text as it arrives, in chunks cut
 * anywhere, and it answers the events completed by each chunk. Lines end with CRLF, LF or CR;
 * comments and unknown fields are ignored; an `id` with a NUL is ignored; `retry` is kept.
 */
export class SseParser {
  private pending = '';
  private data: string[] = [];
  private event = '';
  /** The last event id seen, to send back as Last-Event-ID. */
  lastEventId: string | undefined;
  /** The reconnection delay the server asked for, in ms. */
  retryMs: number | undefined;

  feed(chunk: string): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    let text = this.pending + chunk;
    // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
    const holdCr = text.endsWith('\r');
    if (holdCr) text = text.slice(0, -1);
    const lines = text.split(/\r\n|\r|\n/);
    this.pending = (lines.pop() ?? '') + (holdCr ? '\r' : '');
    for (const line of lines) {
      if (line === '') {
        if (this.data.length > 0) {
          events.push({ event: this.event || 'message', data: this.data.join('\n'), id: this.lastEventId });
        }
        this.data = [];
        this.event = '';
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') this.data.push(value);
      else if (field === 'event') this.event = value;
      else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
      else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    }
    return events;
  }
}

/** What the service pushes about a followed license. */
export interface LicenseEvent {
  /** Its position in the service's event stream (what Last-Event-ID resumes from). */
  id: string;
  type: 'license.revoked' | 'license.suspended' | 'license.reinstated' | 'license.expired';
  serial: string;
  status: 'active' | 'revoked' | 'suspended' | 'expired';
  occurred_at: string;
  revoked_at: string | null;
  valid_until: string | null;
}

export interface LicenseEventsOptions {
  /** The licensing API, e.g. `https://licensing.example.com`. */
  baseUrl: string;
  /** An API key with the `client` (or `read`) scope. */
  apiKey: string;
  /** The serials to follow (at most 100). */
  serials: string[];
  /** Resume after this event id (kept from an earlier subscription's `lastEventId`). */
  lastEventId?: string;
  onEvent(event: LicenseEvent): void;
  /**
   * The service could not replay everything missed while disconnected (too long ago, too much):
   * re-check the licenses (`LicenseClient.checkRevocation()`); events follow from here on.
   */
  onReset?(reason: string): void;
  /** The stream is open (after every reconnect). */
  onOpen?(): void;
  /** A failed connection; it is retried unless the service refused it (401, 403, 400: `fatal`). */
  onError?(error: LicenseClientError, fatal: boolean): void;
  /** First reconnection delay, doubled on each failure up to 30 s (default 1 s, or what the server says). */
  retryDelayMs?: number;
  /** Nothing received for this long (not even the heartbeat) means a dead connection (default 60 s). */
  idleTimeoutMs?: number;
  fetch?: typeof fetch;
}

export interface LicenseEventSubscription {
  /** The last event id received: store it to resume across restarts. */
  readonly lastEventId: string | undefined;
  /** Resolves once the subscription has stopped (close(), or a refusal). */
  readonly closed: Promise<void>;
  close(): void;
}

const PUSHED = new Set(['license.revoked', 'license.suspended', 'license.reinstated', 'license.expired']);
const MAX_RETRY_MS = 30_000;

/**
 * Follows serials until `close()`: every revocation, suspension, reinstatement and expiry is handed
 * to `onEvent` within about a second of happening. Reconnects by itself (with backoff) and resumes
 * with Last-Event-ID, so nothing is missed across a dropped connection or a server restart.
 */
export function subscribeLicenseEvents(options: LicenseEventsOptions): LicenseEventSubscription {
  if (!options.baseUrl || !options.apiKey || options.serials.length === 0) {
    throw new TypeError('subscribeLicenseEvents needs baseUrl, apiKey and at least one serial');
  }
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const url = `${options.baseUrl.replace(/\/+$/, '')}/v1/licenses/events?serials=${options.serials
    .map(encodeURIComponent)
    .join(',')}`;
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  const parser = new SseParser();
  parser.lastEventId = options.lastEventId;
  let stopped = false;
  let controller: AbortController | undefined;
  let wake: (() => void) | undefined;

  const connectOnce = async (): Promise<'refused' | 'ended' | 'failed'> => {
    controller = new AbortController();
    const current = controller;
    let lastByteAt = Date.now();
    const watchdog = setInterval(
      () => {
        if (Date.now() - lastByteAt > idleTimeoutMs) current.abort();
      },
      Math.min(idleTimeoutMs, 15_000),
    );
    (watchdog as { unref?: () => void }).unref?.();
    try {
      const response = await doFetch(url, {
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          accept: 'text/event-stream',
          ...(parser.lastEventId === undefined ? {} : { 'last-event-id': parser.lastEventId }),
        },
        signal: current.signal,
      });
      if (!response.ok || !response.body) {
        const problem = (await response.json().catch(() => ({}))) as { code?: string; detail?: string };
        const error = new LicenseClientError(
          problem.code ?? `http_${response.status}`,
          problem.detail ?? `HTTP ${response.status}`,
          response.status,
        );
        options.onError?.(error, !error.offline);
        return error.offline ? 'failed' : 'refused';
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return 'ended';
        lastByteAt = Date.now();
        for (const event of parser.feed(value)) dispatch(event);
      }
    } catch (error) {
      if (!stopped) {
        options.onError?.(
          new LicenseClientError('network', `the event stream failed: ${String(error)}`, 0),
          false,
        );
      }
      return 'failed';
    } finally {
      clearInterval(watchdog);
    }
  };

  const dispatch = (event: ServerSentEvent): void => {
    if (event.event === 'ready') {
      backoff = undefined;
      options.onOpen?.();
      return;
    }
    if (event.event === 'reset') {
      options.onReset?.(parseData<{ reason?: string }>(event.data)?.reason ?? 'reset');
      return;
    }
    if (!PUSHED.has(event.event)) return;
    const data = parseData<Omit<LicenseEvent, 'id'>>(event.data);
    if (data && event.id !== undefined) options.onEvent({ ...data, id: event.id });
  };

  let backoff: number | undefined;
  const closed = (async () => {
    while (!stopped) {
      const outcome = await connectOnce();
      if (outcome === 'refused' || stopped) break;
      // A stream the server ended cleanly (shutdown, its age limit) is resumed at once.
      const base = parser.retryMs ?? options.retryDelayMs ?? 1_000;
      const delay = outcome === 'ended' && backoff === undefined ? 0 : (backoff ?? base);
      backoff = Math.min((backoff ?? base) * 2, MAX_RETRY_MS);
      if (delay > 0) await sleep(delay / 2 + Math.random() * (delay / 2));
    }
    stopped = true;
  })();

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  return {
    get lastEventId() {
      return parser.lastEventId;
    },
    closed,
    close() {
      stopped = true;
      controller?.abort();
      wake?.();
    },
  };
}

function parseData<T>(data: string): T | undefined {
  try {
    return JSON.parse(data) as T;
  } catch {
    return undefined;
  }
}
