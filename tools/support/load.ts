/**
 * Steady concurrent load for the process-level tests: a few loops of fetches, each answer (or
 * failure) recorded with when it was sent, so that a test can say what happened before and after
 * a process was stopped.
 */

export interface Outcome {
  /** What the request was (`sync`, `check-revocation`, ...). */
  kind: string;
  /** Which process it was sent to. */
  target: string;
  /** `Date.now()` when it was sent. */
  sent: number;
  ms: number;
  /** The HTTP status; absent when no answer came. */
  status?: number;
  /** A problem answer's `code`. */
  code?: string;
  /** `application/problem+json` answered. */
  problem?: boolean;
  /**
   * Why no answer came: `refused` (the connection was never accepted: nothing was sent),
   * `timeout` (no answer within the client's timeout), or the socket error (`reset`: the
   * connection was closed under the request).
   */
  failure?: 'refused' | 'timeout' | 'reset' | string;
  body?: unknown;
  /** The body as it came, for checking a signed answer over its exact bytes. */
  text?: string;
  /** The answer's `Licensing-Signature`, when it is a signed answer. */
  signature?: string;
  /** The answer's `Retry-After`, in seconds, when it has one. */
  retryAfter?: number;
}

export interface Request {
  kind: string;
  method: string;
  url: string;
  target: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** One request, never throwing: its outcome. */
export async function send(request: Request, timeoutMs: number): Promise<Outcome> {
  const sent = Date.now();
  const outcome: Outcome = { kind: request.kind, target: request.target, sent, ms: 0 };
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: {
        ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...request.headers,
      },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    outcome.status = response.status;
    const type = response.headers.get('content-type') ?? '';
    outcome.problem = type.startsWith('application/problem+json');
    outcome.text = text;
    outcome.signature = response.headers.get('licensing-signature') ?? undefined;
    const retryAfter = response.headers.get('retry-after');
    if (retryAfter !== null) outcome.retryAfter = Number(retryAfter);
    if (/json/.test(type) && text) {
      outcome.body = JSON.parse(text);
      if (outcome.problem) outcome.code = (outcome.body as { code?: string }).code;
    }
  } catch (error) {
    outcome.failure = failureOf(error);
  }
  outcome.ms = Date.now() - sent;
  return outcome;
}

function failureOf(error: unknown): string {
  const err = error as { name?: string; cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError') return 'timeout';
  const code = err.cause?.code;
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'reset';
  return `${code ?? err.name}: ${err.cause?.message ?? String(error)}`;
}

/**
 * `workers` loops, each sending `next()` one request after another until `stop()` is called;
 * resolves, once they have all finished their last request, with every outcome.
 */
export function runLoad(
  next: (worker: number) => Request | Promise<Request>,
  { workers, timeoutMs, onOutcome }: { workers: number; timeoutMs: number; onOutcome?: (o: Outcome) => void },
): { stop(): Promise<Outcome[]>; outcomes: Outcome[] } {
  let running = true;
  const outcomes: Outcome[] = [];
  const loops = Array.from({ length: workers }, async (_, worker) => {
    while (running) {
      const outcome = await send(await next(worker), timeoutMs);
      outcomes.push(outcome);
      onOutcome?.(outcome);
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

/**
 * Polls a process's readiness probe until stopped: when it first answered anything but 200, and
 * when its port first refused connections.
 */
export function watchReadiness(
  url: string,
  intervalMs = 10,
): {
  stop(): Promise<{ unready?: number; refused?: number }>;
} {
  let running = true;
  const seen: { unready?: number; refused?: number } = {};
  const loop = (async () => {
    while (running && seen.refused === undefined) {
      const at = Date.now();
      try {
        const response = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(2_000) });
        await response.arrayBuffer();
        if (response.status !== 200) seen.unready ??= at;
      } catch (error) {
        if (failureOf(error) === 'refused') seen.refused = at;
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return seen;
    },
  };
}

/** The `p`-th percentile (0..100) of latencies, in ms. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What a load balancer does in front of several gateways: it sends each request to the next
 * gateway whose readiness probe last answered 200 (polled every `intervalMs`), and a request whose
 * connection is refused (never accepted, so never sent) to another one.
 */
export class Balancer {
  private readonly ready = new Set<string>();
  private next = 0;
  private running = true;
  private readonly polling: Promise<void>;
  /** Requests sent again to another gateway after a refused connection. */
  retriedRefusals = 0;

  constructor(
    private readonly targets: Array<{ label: string; url: string }>,
    intervalMs = 100,
  ) {
    this.polling = (async () => {
      while (this.running) {
        await Promise.all(targets.map((target) => this.probe(target)));
        await sleep(intervalMs);
      }
    })();
  }

  private async probe(target: { label: string; url: string }): Promise<void> {
    try {
      const response = await fetch(`${target.url}/health/ready`, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.ok) this.ready.add(target.label);
      else this.ready.delete(target.label);
    } catch {
      this.ready.delete(target.label);
    }
  }

  /**
   * Sends `request` (built for the chosen gateway) to a ready gateway; waits while none is, and
   * gives up (undefined) once the balancer is stopped.
   */
  async send(
    build: (target: { label: string; url: string }) => Request,
    timeoutMs: number,
  ): Promise<Outcome | undefined> {
    while (this.running) {
      const candidates = this.targets.filter((target) => this.ready.has(target.label));
      if (candidates.length === 0) {
        await sleep(20);
        continue;
      }
      const target = candidates[this.next++ % candidates.length]!;
      const outcome = await send(build(target), timeoutMs);
      if (outcome.failure !== 'refused') return outcome;
      this.ready.delete(target.label);
      this.retriedRefusals += 1;
    }
    return undefined;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.polling;
  }
}
