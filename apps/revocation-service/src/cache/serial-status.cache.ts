import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Redis, Result } from 'ioredis';
import { SerialStatus } from '@licensing/contracts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    putSerialStatus(
      key: string,
      entry: string,
      version: number,
      status: string,
      ttlSeconds: number,
    ): Result<number, Context>;
  }
}

export interface SerialStatusCacheOptions {
  url: string;
  /** BUS_NAMESPACE: environments sharing one Redis keep apart, as they do on NATS. */
  namespace: string;
  ttlSeconds: number;
  negativeTtlSeconds: number;
}

export interface CacheLookup {
  hits: SerialStatus[];
  /** Serials the whole platform does not know (cached as such for a short while). */
  negatives: string[];
  misses: string[];
}

/** What a negative entry holds: never valid JSON of a SerialStatus, and one byte. */
const NEGATIVE = '-';
const RECONNECT_EVERY_MS = 500;
const WARN_EVERY_MS = 10_000;

/**
 * A write may arrive late (a miss filled from PostgreSQL while a revocation is being written
 * through, an event redelivered after a newer one), so the decision to overwrite is taken inside
 * Redis, atomically: an entry reflecting a newer change stays, and a revocation is final.
 * An unreadable entry is replaced.
 */
const PUT_SERIAL_STATUS = `
local current = redis.call('GET', KEYS[1])
if current and current ~= '${NEGATIVE}' then
  local ok, entry = pcall(cjson.decode, current)
  if ok and type(entry) == 'table' then
    if entry.status == 'revoked' and ARGV[3] ~= 'revoked' then return 0 end
    local version = tonumber(entry.version)
    if version and version > tonumber(ARGV[2]) then return 0 end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
return 1
`;

/**
 * The serial-status cache in Redis: `<ns>:serial:<serial>` → JSON of a SerialStatus, or `-` for a
 * serial unknown to the platform. Redis is an accelerator, not a source of truth: with it down
 * every call fails at once (no offline queue, bounded command time) so that callers fall back to
 * the license service instead of waiting, and the client keeps reconnecting on its own.
 * Failures are logged here, rate-limited, and rethrown for the caller to choose its fallback.
 */
@Injectable()
export class SerialStatusCache implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(SerialStatusCache.name);
  private readonly redis: Redis;
  private readonly prefix: string;
  private lastWarnAt = 0;
  private suppressedWarnings = 0;
  private down = false;

  constructor(private readonly options: SerialStatusCacheOptions) {
    this.prefix = options.namespace ? `${options.namespace}:serial:` : 'serial:';
    this.redis = new Redis(options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 1_000,
      commandTimeout: 500,
      retryStrategy: () => RECONNECT_EVERY_MS,
      // Closing while Redis is down arms a timer on the dead socket that nothing clears; keep it short.
      disconnectTimeout: 200,
    });
    this.redis.defineCommand('putSerialStatus', { numberOfKeys: 1, lua: PUT_SERIAL_STATUS });
    // Without a listener ioredis reports every failed reconnect attempt as an unhandled error.
    this.redis.on('error', (error: Error) => this.warn('connection', error));
    this.redis.on('ready', () => {
      if (!this.down) return;
      this.down = false;
      this.logger.log({ msg: 'redis connection restored' });
    });
  }

  /** Boot does not wait for Redis: the service answers correctly without it. */
  async onModuleInit(): Promise<void> {
    await this.redis.connect().catch((error: unknown) => this.warn('connect', error));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** One MGET for the whole batch. */
  async getMany(serials: readonly string[]): Promise<CacheLookup> {
    const keys = new Array<string>(serials.length);
    for (let i = 0; i < serials.length; i++) keys[i] = this.prefix + serials[i];
    let values: (string | null)[];
    try {
      values = await this.redis.mget(keys);
    } catch (error) {
      throw this.failed('get', error);
    }
    const result: CacheLookup = { hits: [], negatives: [], misses: [] };
    for (let i = 0; i < serials.length; i++) {
      const value = values[i];
      const serial = serials[i]!;
      if (value === null || value === undefined) result.misses.push(serial);
      else if (value === NEGATIVE) result.negatives.push(serial);
      else {
        const entry = parseEntry(value);
        if (entry) result.hits.push(entry);
        else result.misses.push(serial);
      }
    }
    return result;
  }

  putMany(statuses: readonly SerialStatus[]): Promise<void> {
    return this.put(statuses, []);
  }

  putNegative(serials: readonly string[]): Promise<void> {
    return this.put([], serials);
  }

  /**
   * Statuses and negative entries in one pipeline. A negative entry never replaces a status (NX):
   * a license created between the lookup and this write must not be hidden.
   */
  async put(statuses: readonly SerialStatus[], unknown: readonly string[]): Promise<void> {
    if (statuses.length === 0 && unknown.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const status of statuses) {
      pipeline.putSerialStatus(
        this.prefix + status.serial,
        JSON.stringify(status),
        status.version,
        status.status,
        this.options.ttlSeconds,
      );
    }
    for (const serial of unknown) {
      pipeline.set(this.prefix + serial, NEGATIVE, 'EX', this.options.negativeTtlSeconds, 'NX');
    }
    let results: [Error | null, unknown][] | null;
    try {
      results = await pipeline.exec();
    } catch (error) {
      throw this.failed('put', error);
    }
    // A pipeline resolves with each command's own error instead of rejecting.
    const error = results?.find(([commandError]) => commandError)?.[0];
    if (error) throw this.failed('put', error);
  }

  /** The key of a serial, for tests and operators. */
  keyOf(serial: string): string {
    return this.prefix + serial;
  }

  private failed(operation: string, error: unknown): unknown {
    this.warn(operation, error);
    return error;
  }

  /** An outage produces a failure per request and per reconnect attempt: one line per interval is enough. */
  private warn(operation: string, error: unknown): void {
    this.down = true;
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_EVERY_MS) {
      this.suppressedWarnings++;
      return;
    }
    this.logger.warn({
      msg: 'redis unavailable: reads fall back to the license service, writes are refused',
      operation,
      err: error instanceof Error ? error.message : String(error),
      suppressed: this.suppressedWarnings,
    });
    this.lastWarnAt = now;
    this.suppressedWarnings = 0;
  }
}

function parseEntry(value: string): SerialStatus | undefined {
  try {
    return JSON.parse(value) as SerialStatus;
  } catch {
    return undefined;
  }
}
