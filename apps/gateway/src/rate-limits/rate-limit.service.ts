import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Redis, Result } from 'ioredis';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { AuthContext } from '../http/auth-context';
import { OrganizationLimitsService } from '../identity/organization-limits.service';
import { Limit } from '../identity/rate-limit-settings';
import { BucketState, RateLimitDecision, RouteClass, decisionOf } from './rate-limits';
import { redisConnection } from '@licensing/shared/config';
import { ThrottledWarning } from '@licensing/shared/logging';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** KEYS: the budgets; ARGV: each one's limit and emission interval (µs), in the same order. */
    rateLimit(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Result<number[], Context>;
  }
}

/**
 * GCRA (the generic cell rate algorithm, "leaky bucket as a meter"), chosen over windows because
 * it keeps ONE number per budget (the theoretical arrival time, TAT), spreads a budget evenly
 * instead of letting a client spend two windows' worth across a fixed window's edge, needs no
 * per-request entries as a sliding log would, and still allows the whole limit as a burst.
 * A limit of L per window W: interval I = W / L; a request is allowed while TAT - now <= (L-1)·I,
 * and moves TAT on by I. Times are integer microseconds from Redis's own clock (TIME), so replicas
 * with skewed clocks share one exact budget and no float rounding decides a boundary.
 * Several budgets are checked and spent atomically: a request refused by one spends none.
 * Reply: allowed (1/0), then per budget: remaining, µs until whole again, µs until allowed.
 */
const RATE_LIMIT = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local tats = {}
local allowed = 1
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i - 1])
  local interval = tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then tat = now end
  tats[i] = tat
  if tat - now > (limit - 1) * interval then allowed = 0 end
end
local reply = { allowed }
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i - 1])
  local interval = tonumber(ARGV[2 * i])
  local tat = tats[i]
  local wait = tat - now - (limit - 1) * interval
  if allowed == 1 then
    tat = tat + interval
    redis.call('SET', key, string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000))
  end
  reply[#reply + 1] = math.max(0, math.floor((limit * interval - (tat - now)) / interval))
  reply[#reply + 1] = tat - now
  reply[#reply + 1] = math.max(0, wait)
end
return reply
`;

const RECONNECT_EVERY_MS = 500;
/**
 * After a failed command, requests stop asking Redis: no request waits behind a dead socket. A
 * PING this often, off the request path, tells when Redis answers again.
 */
const PROBE_EVERY_MS = 1_000;

/** What the limiter counts, for the metrics endpoint to export. */
export interface RateLimitCounters {
  /** Requests answered 429. */
  rejected: number;
  /** Requests served without a check because Redis was unreachable. */
  failedOpen: number;
}

interface Bucket {
  key: string;
  limit: Limit;
}

/**
 * Per-key, per-route-class budgets (and per-license ones for activations) in Redis, so that every
 * gateway replica spends from the same budget: one script call, one round trip per request.
 * Redis is a safeguard, not a dependency: while it is unreachable every request is let through at
 * once (no offline queue, bounded command time), which is counted and logged once per interval.
 */
@Injectable()
export class RateLimitService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RateLimitService.name);
  private readonly redis: Redis;
  private readonly prefix: string;
  readonly counters: RateLimitCounters = { rejected: 0, failedOpen: 0 };
  /** Set by a failed command: requests skip Redis until a probe's PING is answered. */
  private skipping = false;
  private probe?: NodeJS.Timeout;
  private readonly outage = new ThrottledWarning(this.logger);
  private down = false;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly organizations: OrganizationLimitsService,
  ) {
    // BUS_NAMESPACE keeps environments (and parallel test runs) sharing one Redis apart.
    this.prefix = config.BUS_NAMESPACE ? `${config.BUS_NAMESPACE}:ratelimit:` : 'ratelimit:';
    this.redis = new Redis({
      ...redisConnection(config),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1_000,
      commandTimeout: 250,
      retryStrategy: () => RECONNECT_EVERY_MS,
      disconnectTimeout: 200,
      // Concurrent requests' scripts share one write to the socket: fewer syscalls under load.
      enableAutoPipelining: true,
    });
    this.redis.defineCommand('rateLimit', { lua: RATE_LIMIT });
    this.redis.on('error', (error: Error) => this.warn('connection', error));
    this.redis.on('ready', () => this.answered());
  }

  /** Whether the Redis connection is up now (the readiness probe reports it). */
  get isConnected(): boolean {
    return this.redis.status === 'ready';
  }

  /** Boot does not wait for Redis: requests are served without it. */
  async onModuleInit(): Promise<void> {
    await this.redis.connect().catch((error: unknown) => this.warn('connect', error));
  }

  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.probe);
    this.probe = undefined;
    await this.redis.quit().catch(() => undefined);
    // Also closes what QUIT leaves open: the connections watching the sentinels for a failover.
    this.redis.disconnect();
  }

  /**
   * Spends one request of the caller's key on the route class's budget, and of the license's
   * activation budget when `license` is given. Never throws: a failure is an allowed request.
   */
  async consume(auth: AuthContext, routeClass: RouteClass, license?: string): Promise<RateLimitDecision> {
    const limitsOrLoading = this.organizations.limitsOf(auth.orgId);
    const limits = limitsOrLoading instanceof Promise ? await limitsOrLoading : limitsOrLoading;
    // A hash tag on the organization keeps one request's keys in one slot of a Redis Cluster.
    const scope = `${this.prefix}{${auth.orgId}}:`;
    const buckets: Bucket[] = [{ key: `${scope}key:${auth.keyId}:${routeClass}`, limit: limits[routeClass] }];
    if (license !== undefined) buckets.push({ key: `${scope}license:${license}`, limit: limits.activations });

    if (this.redis.status !== 'ready' || this.skipping) {
      return this.failOpen(buckets[0]!.limit);
    }
    const args: (string | number)[] = buckets.map((bucket) => bucket.key);
    for (const { limit } of buckets) {
      args.push(limit.limit, Math.max(1, Math.floor((limit.window_seconds * 1_000_000) / limit.limit)));
    }
    let reply: number[];
    try {
      reply = await this.redis.rateLimit(buckets.length, ...args);
    } catch (error) {
      this.warn('check', error);
      this.skipUntilAnswered();
      return this.failOpen(buckets[0]!.limit);
    }
    const states: BucketState[] = buckets.map((_, i) => ({
      remaining: reply[1 + 3 * i]!,
      resetMicros: reply[2 + 3 * i]!,
      retryMicros: reply[3 + 3 * i]!,
    }));
    const decision = decisionOf(
      reply[0] === 1,
      buckets.map((bucket) => bucket.limit),
      states,
    );
    if (!decision.allowed) this.counters.rejected++;
    return decision;
  }

  /**
   * Requests skip Redis from now on. A PING every PROBE_EVERY_MS, off the request path, ends that
   * once Redis answers. A Redis that stops answering without closing its connections (a network
   * that drops packets) costs only the requests already waiting for it, not one in every interval.
   */
  private skipUntilAnswered(): void {
    if (this.skipping) return;
    this.skipping = true;
    const probe = () => {
      const timer = setTimeout(() => {
        this.redis.ping().then(
          () => this.answered(),
          (error: unknown) => {
            this.warn('probe', error);
            // Unless shut down or ended meanwhile.
            if (this.probe === timer) probe();
          },
        );
      }, PROBE_EVERY_MS).unref();
      this.probe = timer;
    };
    probe();
  }

  /** Redis answers again (a new connection, or a probe's PING): requests ask it again. */
  private answered(): void {
    clearTimeout(this.probe);
    this.probe = undefined;
    this.skipping = false;
    if (!this.down) return;
    this.down = false;
    this.logger.log({ msg: 'rate-limit redis connection restored' });
  }

  private failOpen(limit: Limit): RateLimitDecision {
    this.counters.failedOpen++;
    return { allowed: true, limit };
  }

  /** An outage fails every request and every reconnect attempt: one line per interval is enough. */
  private warn(operation: string, error: unknown): void {
    this.down = true;
    this.outage.warn({
      msg: 'rate-limit redis unavailable: requests are served without limits',
      operation,
      err: error instanceof Error ? error.message : String(error),
      failed_open_total: this.counters.failedOpen,
    });
  }
}
