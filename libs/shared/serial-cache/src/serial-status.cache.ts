import { randomBytes } from 'node:crypto';
import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Redis, Result } from 'ioredis';
import { SerialStatus } from '@licensing/contracts';
import { RedisConnection } from '@licensing/shared/config';
import { ThrottledWarning } from '@licensing/shared/logging';
import { NEGATIVE_ENTRY, PUT_SERIAL_STATUS, decodeEntry, putArguments } from './serial-entry';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    putSerialStatus(
      key: string,
      entry: string,
      version: number,
      status: string,
      ttlSeconds: number,
    ): Result<number, Context>;
    claimCacheGeneration(metaKey: string, runId: string, candidate: string): Result<string, Context>;
  }
}

export interface SerialStatusReaderOptions {
  /** Where Redis is (`redisConnection` of the service's settings). */
  connection: RedisConnection;
  /** BUS_NAMESPACE: environments sharing one Redis keep apart, as they do on NATS. */
  namespace: string;
  /** How often the Redis behind the connection is checked for being the one the cache was filled in. */
  generationCheckMs?: number;
}

export interface SerialStatusCacheOptions extends SerialStatusReaderOptions {
  ttlSeconds: number;
  negativeTtlSeconds: number;
}

export interface CacheLookup {
  hits: SerialStatus[];
  /** Serials the whole platform does not know (cached as such for a short while). */
  negatives: string[];
  misses: string[];
}

const RECONNECT_EVERY_MS = 500;
const GENERATION_CHECK_MS = 1_000;

/**
 * Which generation of entries the Redis server now running may serve. The generation is kept with
 * the run_id of the server process it was created in; a server that is not that process (restarted
 * from a snapshot or an append-only file, a promoted replica) holds data that may predate a write
 * it acknowledged before, so it gets a new, empty generation. Atomic: replicas racing to claim one
 * agree on the first.
 */
const CLAIM_CACHE_GENERATION = `
if redis.call('HGET', KEYS[1], 'run_id') == ARGV[1] then
  local generation = redis.call('HGET', KEYS[1], 'generation')
  if generation then return generation end
end
redis.call('HSET', KEYS[1], 'run_id', ARGV[1], 'generation', ARGV[2])
return ARGV[2]
`;

/** `<ns>:serial-cache`: the hash naming the generation of entries the running Redis may serve. */
export const cacheMetaKey = (namespace: string): string =>
  namespace ? `${namespace}:serial-cache` : 'serial-cache';

const serialKeyPrefix = (namespace: string, generation: string): string =>
  `${namespace ? `${namespace}:` : ''}serial:${generation}:`;

/** The key a serial's entry has now (for tests and operators): `<ns>:serial:<generation>:<serial>`. */
export async function serialCacheKey(redis: Redis, namespace: string, serial: string): Promise<string> {
  const generation = await redis.hget(cacheMetaKey(namespace), 'generation');
  if (!generation) throw new Error('the serial-status cache has no generation yet');
  return serialKeyPrefix(namespace, generation) + serial;
}

/**
 * The serial-status cache in Redis as every service may use it: read. Entries live at
 * `<ns>:serial:<generation>:<serial>` (their format is serial-entry.ts's); `-` marks a serial
 * unknown to the platform. Only the revocation service writes them (SerialStatusCache below);
 * the license service reads them on verify and asks the revocation service to fill a miss.
 *
 * The cache must never answer from a state older than the database. A Redis restarted from a
 * snapshot taken before a revocation still holds the license as active; so entries live under a
 * generation tied to the Redis process (its run_id), checked on every (re)connect and every
 * GENERATION_CHECK_MS: another process means a new generation, i.e. a cold cache, and the old
 * entries are never read again (they expire with their TTL). Until the check has passed after a
 * connect, and whenever the connection drops, the cache has no generation and every call fails
 * at once, so callers use the license service. A read whose generation changed while it was in
 * flight is discarded the same way.
 * Redis is an accelerator, not a source of truth: with it down
 * every call fails at once (no offline queue, bounded command time) so that callers fall back to
 * the license service instead of waiting, and the client keeps reconnecting on its own.
 * Failures are logged here, rate-limited, and rethrown for the caller to choose its fallback.
 */
@Injectable()
export class SerialStatusReader implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('SerialStatusCache');
  protected readonly redis: Redis;
  private readonly metaKey: string;
  private readonly namespace: string;
  private readonly generationCheckMs: number;
  /** `<ns>:serial:<generation>:` while the connected Redis is known to serve the current generation. */
  private prefix?: string;
  private checkTimer?: NodeJS.Timeout;
  /** Counts dropped connections: a check that straddles one must not confirm the next server. */
  private disconnects = 0;
  private readonly outage = new ThrottledWarning(this.logger);
  private down = false;

  constructor(options: SerialStatusReaderOptions) {
    this.namespace = options.namespace;
    this.generationCheckMs = options.generationCheckMs ?? GENERATION_CHECK_MS;
    this.metaKey = cacheMetaKey(options.namespace);
    this.redis = new Redis({
      ...options.connection,
      lazyConnect: true,
      enableOfflineQueue: false,
      // A command cut off by a dropped connection must not run later against whatever Redis answers then.
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 1_000,
      commandTimeout: 500,
      retryStrategy: () => RECONNECT_EVERY_MS,
      // Closing while Redis is down arms a timer on the dead socket that nothing clears; keep it short.
      disconnectTimeout: 200,
    });
    this.redis.defineCommand('claimCacheGeneration', { numberOfKeys: 1, lua: CLAIM_CACHE_GENERATION });
    this.redis.on('close', () => {
      this.disconnects++;
      this.prefix = undefined;
    });
    // Without a listener ioredis reports every failed reconnect attempt as an unhandled error.
    this.redis.on('error', (error: Error) => this.warn('connection', error));
    this.redis.on('ready', () => {
      void this.checkGeneration();
      if (!this.down) return;
      this.down = false;
      this.logger.log({ msg: 'redis connection restored' });
    });
  }

  /** Whether the Redis connection is up now (the readiness probe reports it). */
  get isConnected(): boolean {
    return this.redis.status === 'ready';
  }

  /** Boot does not wait for Redis: the service answers correctly without it. */
  async onModuleInit(): Promise<void> {
    await this.redis.connect().catch((error: unknown) => this.warn('connect', error));
    await this.checkGeneration();
    this.checkTimer = setInterval(() => void this.checkGeneration(), this.generationCheckMs);
    this.checkTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.checkTimer);
    await this.redis.quit().catch(() => undefined);
    // Also closes what QUIT leaves open: the connections watching the sentinels for a failover.
    this.redis.disconnect();
  }

  /**
   * Finds (or starts) the generation the connected Redis process may serve. Safe to run at any
   * time; until it succeeds after a connect, the cache answers nothing.
   */
  async checkGeneration(): Promise<void> {
    if (this.redis.status !== 'ready') return;
    const disconnects = this.disconnects;
    try {
      const info = await this.redis.info('server');
      const runId = /^run_id:(\w+)/m.exec(info)?.[1];
      if (!runId) throw new Error('INFO server has no run_id');
      const generation = await this.redis.claimCacheGeneration(
        this.metaKey,
        runId,
        randomBytes(6).toString('hex'),
      );
      const prefix = serialKeyPrefix(this.namespace, generation);
      if (disconnects !== this.disconnects) return; // the 'ready' of the new connection checks again
      if (this.prefix !== undefined && this.prefix !== prefix) {
        this.logger.warn({
          msg: 'redis is not the process the cache was filled in (restarted or failed over): starting a cold cache',
          generation,
        });
      }
      this.prefix = prefix;
    } catch (error) {
      this.prefix = undefined;
      this.warn('check generation', error);
    }
  }

  /** The key prefix of the current generation, or a failure when there is none to trust. */
  protected currentPrefix(): string {
    if (this.prefix === undefined) throw new Error('the cache generation of this Redis is not confirmed yet');
    return this.prefix;
  }

  /** One MGET for the whole batch. */
  async getMany(serials: readonly string[]): Promise<CacheLookup> {
    let values: (string | null)[];
    try {
      const prefix = this.currentPrefix();
      const keys = new Array<string>(serials.length);
      for (let i = 0; i < serials.length; i++) keys[i] = prefix + serials[i];
      values = await this.redis.mget(keys);
      if (this.prefix !== prefix) throw new Error('the cache generation changed during the read');
    } catch (error) {
      throw this.failed('get', error);
    }
    const result: CacheLookup = { hits: [], negatives: [], misses: [] };
    for (let i = 0; i < serials.length; i++) {
      const value = values[i];
      const serial = serials[i]!;
      if (value === null || value === undefined) result.misses.push(serial);
      else if (value === NEGATIVE_ENTRY) result.negatives.push(serial);
      else {
        const entry = decodeEntry(value);
        if (entry) result.hits.push(entry);
        else result.misses.push(serial);
      }
    }
    return result;
  }

  protected failed(operation: string, error: unknown): unknown {
    this.warn(operation, error);
    return error;
  }

  /** An outage produces a failure per request and per reconnect attempt: one line per interval is enough. */
  private warn(operation: string, error: unknown): void {
    this.down = true;
    this.outage.warn({
      msg: 'redis unavailable: reads fall back to the license service, writes are refused',
      operation,
      err: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * The one writer of serial entries, owned by the revocation service (SerialCacheModule.forWriter):
 * it applies license events, write-throughs and fills, all through one script that refuses an older
 * version and never turns `revoked` back, under the generation the reader confirmed. Any other
 * service gets a SerialStatusReader and sends what it wants cached to the revocation service
 * (`revocation.cache.put.v1`); serial-cache-writers.spec.ts fails if a second writer appears.
 */
@Injectable()
export class SerialStatusCache extends SerialStatusReader {
  constructor(private readonly options: SerialStatusCacheOptions) {
    super(options);
    this.redis.defineCommand('putSerialStatus', { numberOfKeys: 1, lua: PUT_SERIAL_STATUS });
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
    let prefix: string;
    try {
      prefix = this.currentPrefix();
    } catch (error) {
      throw this.failed('put', error);
    }
    const pipeline = this.redis.pipeline();
    for (const status of statuses) {
      pipeline.putSerialStatus(prefix + status.serial, ...putArguments(status, this.options.ttlSeconds));
    }
    for (const serial of unknown) {
      pipeline.set(prefix + serial, NEGATIVE_ENTRY, 'EX', this.options.negativeTtlSeconds, 'NX');
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
}
