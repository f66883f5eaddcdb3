import type { CredentialScope } from '../identity/auth-context';
import { GatewayConfig } from '../config';

/**
 * The budgets a request draws on: one per API key and route class, and, for activations, one per
 * license whatever the key. Pure: what the limits are, how a route is classed, what the headers say.
 */
export const LIMIT_NAMES = ['admin', 'read', 'client', 'activations'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];
export type RouteClass = Exclude<LimitName, 'activations'>;

export interface Limit {
  /** Requests allowed per window (and at once, as a burst). */
  limit: number;
  window_seconds: number;
}

export type RateLimits = Record<LimitName, Limit>;

/** What an organization's `rate_limits` column holds: only the limits that differ from the defaults. */
export type RateLimitOverrides = Partial<RateLimits>;

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

type LimitSettings = Pick<
  GatewayConfig,
  | 'RATE_LIMIT_WINDOW_SECONDS'
  | 'RATE_LIMIT_ADMIN'
  | 'RATE_LIMIT_READ'
  | 'RATE_LIMIT_CLIENT'
  | 'RATE_LIMIT_ACTIVATIONS'
  | 'RATE_LIMIT_ACTIVATIONS_WINDOW_SECONDS'
>;

export function defaultLimits(config: LimitSettings): RateLimits {
  const window_seconds = config.RATE_LIMIT_WINDOW_SECONDS;
  return {
    admin: { limit: config.RATE_LIMIT_ADMIN, window_seconds },
    read: { limit: config.RATE_LIMIT_READ, window_seconds },
    client: { limit: config.RATE_LIMIT_CLIENT, window_seconds },
    activations: {
      limit: config.RATE_LIMIT_ACTIVATIONS,
      window_seconds: config.RATE_LIMIT_ACTIVATIONS_WINDOW_SECONDS,
    },
  };
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;

export const isLimit = (value: unknown): value is Limit =>
  typeof value === 'object' &&
  value !== null &&
  isCount((value as Limit).limit) &&
  isCount((value as Limit).window_seconds);

/** The overrides an organization's stored value holds; anything unreadable in it is ignored. */
export function overridesOf(stored: unknown): RateLimitOverrides {
  const overrides: RateLimitOverrides = {};
  if (typeof stored !== 'object' || stored === null) return overrides;
  for (const name of LIMIT_NAMES) {
    const limit = (stored as Record<string, unknown>)[name];
    if (isLimit(limit)) overrides[name] = { limit: limit.limit, window_seconds: limit.window_seconds };
  }
  return overrides;
}

export function effectiveLimits(defaults: RateLimits, stored: unknown): RateLimits {
  return { ...defaults, ...overridesOf(stored) };
}

const UNIT_SECONDS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * The operator CLI's changes: `client=900000/60s`, `activations=120/1h` (requests per window, the
 * window in s, m, h or d; seconds without a unit), or `read=default` to drop an override.
 */
export function parseLimitChanges(args: readonly string[]): Map<LimitName, Limit | null> {
  const changes = new Map<LimitName, Limit | null>();
  for (const arg of args) {
    const match = /^([a-z]+)=(?:(default)|(\d+)\/(\d+)([smhd]?))$/.exec(arg);
    const name = LIMIT_NAMES.find((candidate) => candidate === match?.[1]);
    if (!match || !name) {
      throw new Error(
        `"${arg}" is not <${LIMIT_NAMES.join('|')}>=<requests>/<window>[s|m|h|d] or <name>=default`,
      );
    }
    if (match[2]) {
      changes.set(name, null);
      continue;
    }
    const limit = { limit: Number(match[3]), window_seconds: Number(match[4]) * UNIT_SECONDS[match[5]!]! };
    if (!isLimit(limit)) throw new Error(`"${arg}": requests and window must be positive integers`);
    changes.set(name, limit);
  }
  return changes;
}

/** The overrides after the changes; null when none is left (the organization uses the defaults). */
export function applyLimitChanges(
  stored: unknown,
  changes: ReadonlyMap<LimitName, Limit | null>,
): RateLimitOverrides | null {
  const overrides = overridesOf(stored);
  for (const [name, limit] of changes) {
    if (limit) overrides[name] = limit;
    else delete overrides[name];
  }
  return Object.keys(overrides).length > 0 ? overrides : null;
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
