import type { RedisOptions } from 'ioredis';
import { env, parseHostPorts } from './env';

const SENTINEL_PORT = 26379;

/**
 * The Redis a process uses: one address (`REDIS_URL`, a managed endpoint that fails over behind
 * it), or a master found through Redis Sentinel (`REDIS_SENTINELS`). Required in production.
 */
export function redisEnv(purpose: string) {
  return {
    REDIS_URL: env.url({
      protocols: ['redis', 'rediss'],
      default: 'redis://127.0.0.1:6379',
      production: null,
      description: `${purpose}; with REDIS_SENTINELS only its credentials, database and rediss:// (TLS) apply`,
    }),
    REDIS_SENTINELS: env.hostPorts({
      default: '',
      defaultPort: SENTINEL_PORT,
      description:
        'Redis Sentinel instances, host:port comma separated: the master of REDIS_SENTINEL_NAME is asked of them, and followed through failovers',
    }),
    REDIS_SENTINEL_NAME: env.string({
      default: 'mymaster',
      description: 'The master group the sentinels monitor (sentinel monitor <name> ...)',
    }),
    REDIS_SENTINEL_PASSWORD: env.string({
      default: '',
      description: 'Password of the sentinels themselves (requirepass of sentinel.conf), when they have one',
    }),
  };
}

export interface RedisSettings {
  REDIS_URL: string;
  REDIS_SENTINELS?: string;
  REDIS_SENTINEL_NAME?: string;
  REDIS_SENTINEL_PASSWORD?: string;
}

/** Where and how to connect, as ioredis options; the caller adds its own timeouts and retries. */
export type RedisConnection = Pick<
  RedisOptions,
  | 'host'
  | 'port'
  | 'username'
  | 'password'
  | 'db'
  | 'tls'
  | 'sentinels'
  | 'name'
  | 'sentinelPassword'
  | 'enableTLSForSentinelMode'
  | 'failoverDetector'
  | 'reconnectOnError'
>;

/**
 * The connection the settings describe. With sentinels, ioredis asks them for the master at every
 * (re)connect, listens for their `+switch-master` (failoverDetector) to move at once, and a
 * `READONLY` answer (the old master, demoted) makes it reconnect: the command that got it fails,
 * and the caller's own fallback applies (the rate limiter fails open, the revocation cache falls
 * back to PostgreSQL).
 */
export function redisConnection(settings: RedisSettings): RedisConnection {
  const url = new URL(settings.REDIS_URL);
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined;
  const tls = url.protocol === 'rediss:';
  const common: RedisConnection = {
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(db !== undefined && Number.isInteger(db) ? { db } : {}),
    ...(tls ? { tls: {} } : {}),
  };
  const sentinels = parseHostPorts(settings.REDIS_SENTINELS ?? '', SENTINEL_PORT);
  if (sentinels.length === 0) return { ...common, host: url.hostname, port: Number(url.port || 6379) };
  return {
    ...common,
    // TLS to the master and replicas the sentinels name (the sentinels themselves are asked in clear).
    ...(tls ? { enableTLSForSentinelMode: true } : {}),
    sentinels,
    name: settings.REDIS_SENTINEL_NAME || 'mymaster',
    ...(settings.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: settings.REDIS_SENTINEL_PASSWORD } : {}),
    failoverDetector: true,
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
  };
}
