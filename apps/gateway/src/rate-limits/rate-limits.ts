import type { CredentialScope } from '../http/auth-context';
import { Limit, LimitName } from '../identity/rate-limit-settings';

/** Pure: how a route is classed, what a request's budgets decide and what the headers say. */
export type RouteClass = Exclude<LimitName, 'activations'>;

/**
 * The class of a route, from the route alone (never from the caller's key): anything a `client`
 * key may call is client traffic; otherwise a GET is a read, as is a POST that `read` may call;
 * everything else is an admin write. A route without `@AllowScopes` is admin-only.
 */
export function routeClassOf(method: string, allowedScopes: readonly CredentialScope[] = []): RouteClass {
  // What shipped applications call (with a client key or a token) is client traffic.
  if (allowedScopes.some((scope) => scope === 'client' || scope === 'license' || scope === 'machine')) {
    return 'client';
  }
  if (method === 'GET' || method === 'HEAD' || allowedScopes.includes('read')) return 'read';
  return 'admin';
}

/** The outcome of one request against the budget that is closest to running out. */
export interface RateLimitDecision {
  allowed: boolean;
  limit: Limit;
  /** What the budget holds; absent when Redis could not be asked and the request was let through. */
  state?: {
    remaining: number;
    /** Seconds until this budget is whole again. */
    resetSeconds: number;
    /** Seconds until a request would be allowed (0 when this one was). */
    retryAfterSeconds: number;
  };
}

/** One budget's state as the Lua script reports it: requests left, and microsecond durations. */
export interface BucketState {
  remaining: number;
  resetMicros: number;
  retryMicros: number;
}

const toSeconds = (micros: number): number => Math.ceil(micros / 1_000_000);

/**
 * The headers describe one budget: the one that refused the request (the longest wait, if several
 * did), or else the one with the fewest requests left, since that is the one a client meets first.
 */
export function decisionOf(
  allowed: boolean,
  limits: readonly Limit[],
  states: readonly BucketState[],
): RateLimitDecision {
  let chosen = 0;
  for (let i = 1; i < states.length; i++) {
    const better = allowed
      ? states[i]!.remaining < states[chosen]!.remaining
      : states[i]!.retryMicros > states[chosen]!.retryMicros;
    if (better) chosen = i;
  }
  const state = states[chosen]!;
  return {
    allowed,
    limit: limits[chosen]!,
    state: {
      remaining: state.remaining,
      resetSeconds: toSeconds(state.resetMicros),
      retryAfterSeconds: allowed ? 0 : Math.max(1, toSeconds(state.retryMicros)),
    },
  };
}

/**
 * `RateLimit-Policy` and `RateLimit` in the form of the IETF draft, and `Retry-After` when refused.
 * Without a known state (Redis unreachable) only the policy is stated.
 */
export function rateLimitHeaders({ allowed, limit, state }: RateLimitDecision): Record<string, string> {
  const headers: Record<string, string> = { 'ratelimit-policy': `${limit.limit};w=${limit.window_seconds}` };
  if (!state) return headers;
  headers.ratelimit = `limit=${limit.limit}, remaining=${state.remaining}, reset=${state.resetSeconds}`;
  if (!allowed) headers['retry-after'] = String(state.retryAfterSeconds);
  return headers;
}

/**
 * The license an activation request names, as a budget key: by id or by serial as given (the body
 * is not validated yet; validation refuses it later if it is malformed, and it has no effect then).
 */
export function licenseOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { license_id, license_key } = body as Record<string, unknown>;
  if (typeof license_id === 'string' && license_id.length <= 64) return `id:${license_id.toLowerCase()}`;
  if (typeof license_key === 'string' && license_key.length <= 200) return `serial:${license_key}`;
  return undefined;
}
