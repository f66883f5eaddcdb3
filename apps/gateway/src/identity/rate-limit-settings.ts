import { GatewayConfig } from '../config';

/**
 * The budgets a request draws on: one per API key and route class, and, for activations, one per
 * license whatever the key. Pure: what the limits are, what an organization overrides, and the
 * operator CLI's changes to them.
 */
export const LIMIT_NAMES = ['admin', 'read', 'client', 'activations'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

export interface Limit {
  /** Requests allowed per window (and at once, as a burst). */
  limit: number;
  window_seconds: number;
}

export type RateLimits = Record<LimitName, Limit>;

/** What an organization's `rate_limits` column holds: only the limits that differ from the defaults. */
export type RateLimitOverrides = Partial<RateLimits>;

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

const isLimit = (value: unknown): value is Limit =>
  typeof value === 'object' &&
  value !== null &&
  isCount((value as Limit).limit) &&
  isCount((value as Limit).window_seconds);

/** The overrides an organization's stored value holds; anything unreadable in it is ignored. */
function overridesOf(stored: unknown): RateLimitOverrides {
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
