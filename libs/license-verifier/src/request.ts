// What the online client and the relay client share to send a request: the error type, the fetch
// with its timeout, and reading a problem answer. Internal: the package index does not export it.

/**
 * A request the service refused (its problem `code` and `detail`), could not be sent (`network`,
 * `timeout`), or a call made before it can be (`not_activated`: a seat call before `activate()`).
 */
export class LicenseClientError extends Error {
  override readonly name = 'LicenseClientError';
  constructor(
    /** The problem `code`; `network` / `timeout` when the service was not reached; `not_activated`. */
    readonly code: string,
    message: string,
    /** The HTTP status, 0 when there was no response. */
    readonly status: number,
  ) {
    super(message);
  }

  /** The service was not reached or not able to answer: a retry later may succeed. */
  get offline(): boolean {
    return this.code === 'network' || this.code === 'timeout' || this.status === 429 || this.status >= 500;
  }
}

/** Where requests go and how long each may take. */
export interface Endpoint {
  baseUrl: string;
  fetch: typeof fetch;
  timeoutMs: number;
  /** The peer a `network` error names, e.g. "the relay". */
  peer: string;
}

/** A response and its body text, whatever its status. */
export interface Reply {
  response: Response;
  text: string;
}

/** The fetch to use: the given one, else the runtime's. Throws when there is neither. */
export function fetchOf(given: typeof fetch | undefined): typeof fetch {
  const globalFetch = (globalThis as { fetch?: typeof fetch }).fetch;
  if (!given && !globalFetch) throw new TypeError('no fetch in this runtime: pass options.fetch');
  return given ?? ((input, init) => globalFetch!(input, init));
}

/**
 * One request, with a JSON body when `body` is defined. The timeout covers the body text too.
 * Throws `timeout` when no full answer came in time, `network` when none could come.
 */
export async function send(
  endpoint: Endpoint,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<Reply> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), endpoint.timeoutMs);
  try {
    const response = await endpoint.fetch(`${endpoint.baseUrl}${path}`, {
      method,
      headers: {
        ...headers,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: controller.signal,
    });
    return { response, text: await response.text() };
  } catch (error) {
    if (controller.signal.aborted) {
      throw new LicenseClientError('timeout', `no answer within ${endpoint.timeoutMs} ms`, 0);
    }
    throw new LicenseClientError('network', `${endpoint.peer} is unreachable: ${describe(error)}`, 0);
  } finally {
    clearTimeout(timer);
  }
}

/** The error a non-2xx answer stands for, read from its problem+json body. */
export function problemOf({ response, text }: Reply): LicenseClientError {
  const problem = parseObject(text) ?? {};
  const field = (name: string): string | undefined => {
    const value = problem[name];
    return typeof value === 'string' ? value : undefined;
  };
  return new LicenseClientError(
    field('code') ?? `http_${response.status}`,
    field('detail') ?? field('title') ?? `HTTP ${response.status}`,
    response.status,
  );
}

/** The error itself, or a `network` error that describes it. */
export function asClientError(error: unknown): LicenseClientError {
  return error instanceof LicenseClientError ? error : new LicenseClientError('network', describe(error), 0);
}

/** An error's message, with its cause's (fetch puts the reason there). */
function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}

/** The JSON of a body, undefined when it is empty or not JSON. */
export function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** The JSON object of a body, undefined when it is not one. */
export function parseObject(text: string): Record<string, unknown> | undefined {
  const value = parseJson(text);
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
