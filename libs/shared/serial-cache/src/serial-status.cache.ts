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
    claimCacheGeneration(
      metaKey: string,
      previousMetaKey: string,
      runId: string,
      candidate: string,
      fence: '0' | '1',
      openDelayMs: number,
    ): Result<[string, number, number], Context>;
  }
}

export interface SerialStatusReaderOptions {
  /** Where Redis is (`redisConnection` of the service's settings). */
  connection: RedisConnection;
  /** BUS_NAMESPACE: environments sharing one Redis keep apart, as they do on NATS. */
  namespace: string;
  /** How often the Redis behind the connection is checked for being the one the cache was filled in. */
  generationCheckMs?: number;
  /**
   * How long a generation stays closed after a writer fenced off processes of the previous entry
   * format: longer than their generation check, so that every one of them has stopped first.
   */
  fenceDelayMs?: number;
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
/** Three checks of the previous release (one a second). */
const FENCE_DELAY_MS = 3_000;
/** What the previous format's generation hash is replaced with: its processes' check then fails. */
const FENCE = 'fenced: entries are in the compact format now';

/**
 * Which generation of entries the Redis server now running may serve, and in how many
 * milliseconds it opens. The generation is kept with the run_id of the server process it was
 * created in; a server that is not that process (restarted from a snapshot or an append-only
 * file, a promoted replica) holds data that may predate a write it acknowledged before, so it gets
 * a new, empty generation. Atomic: replicas racing to claim one agree on the first.
 *
 * A writer (ARGV[3] = '1') also fences off the previous entry format. Processes of the previous
 * release keep their generation in KEYS[2] as a hash. Their writes never reach the entries read
 * here, so a revocation one of them applied would not be seen. Replacing the hash with a string
 * makes their check fail: they stop using the cache and answer from PostgreSQL. Whenever the old
 * hash is found, the generation starts over, empty, since old processes may have written around
 * it. It stays closed until all of them have checked again (ARGV[4] ms), and nothing reads or
 * writes it meanwhile. Such a generation also takes no license event produced before it opened
 * (`applies_from`): an old process may have applied a later change of the same license to the
 * old entries, and acknowledged it, before its check failed. Its entries come from PostgreSQL
 * and from newer changes.
 *
 * Returns the generation, the milliseconds until it opens, and its `applies_from` (0 for none).
 */
const CLAIM_CACHE_GENERATION = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local generation
if redis.call('HGET', KEYS[1], 'run_id') == ARGV[1] then
  generation = redis.call('HGET', KEYS[1], 'generation')
end
if not generation then
  generation = ARGV[2]
  redis.call('HSET', KEYS[1], 'run_id', ARGV[1], 'generation', generation, 'opens_at', now)
  redis.call('HDEL', KEYS[1], 'applies_from')
end
if ARGV[3] == '1' and redis.call('TYPE', KEYS[2]).ok ~= 'string' then
  local previous = redis.call('EXISTS', KEYS[2]) == 1
  redis.call('SET', KEYS[2], '${FENCE}')
  if previous then
    generation = ARGV[2]
    local opens = now + tonumber(ARGV[4])
    redis.call('HSET', KEYS[1], 'run_id', ARGV[1], 'generation', generation, 'opens_at', opens, 'applies_from', opens)
  end
end
local opensIn = (tonumber(redis.call('HGET', KEYS[1], 'opens_at')) or 0) - now
if opensIn < 0 then opensIn = 0 end
return {generation, opensIn, tonumber(redis.call('HGET', KEYS[1], 'applies_from')) or 0}
`;

const namespaced = (namespace: string, key: string): string => (namespace ? `${namespace}:${key}` : key);

/** `<ns>:serial-cache:v2`: the hash naming the generation of entries the running Redis may serve. */
export const cacheMetaKey = (namespace: string): string => namespaced(namespace, 'serial-cache:v2');

/** Where the previous release kept its generation (JSON entries under `<ns>:serial:`): fenced off. */
export const previousCacheMetaKey = (namespace: string): string => namespaced(namespace, 'serial-cache');

const serialKeyPrefix = (namespace: string, generation: string): string =>
  namespaced(namespace, `s2:${generation}:`);

/**
 * The key of an organization's serial now (for tests and operators):
 * `<ns>:s2:<generation>:<org>:<serial>`.
 */
export async function serialCacheKey(
  redis: Redis,
  namespace: string,
  orgId: string,
  serial: string,
): Promise<string> {
  const generation = await redis.hget(cacheMetaKey(namespace), 'generation');
  if (!generation) throw new Error('the serial-status cache has no generation yet');
  return `${serialKeyPrefix(namespace, generation)}${orgId}:${serial}`;
}

/**
 * The serial-status cache in Redis as every service may use it: read. Entries live at
 * `<ns>:s2:<generation>:<org>:<serial>` (their format is serial-entry.ts's); `-` marks a serial
 * the organization has no license of. The organization is part of the key, so a lookup can
 * never return another organization's entry. Only the revocation service writes them
 * (SerialStatusCache below); the license service reads them on verify and asks the revocation
 * service to fill a miss.
 *
 * The cache must never answer from a state older than the database. A Redis restarted from a
 * snapshot taken before a revocation still holds the license as active; so entries live under a
 * generation tied to the Redis process (its run_id), checked on every (re)connect and every
 * GENERATION_CHECK_MS: another process means a new generation, i.e. a cold cache, and the old
 * entries are never read again (they expire with their TTL). Until the check has passed after a
 * connect, and whenever the connection drops, the cache has no generation and every call fails
 * at once, so callers use the license service. A read whose generation changed while it was in
 * flight is discarded the same way. During a rolling upgrade from the previous entry format, a
 * generation stays closed until the previous release's processes have stopped using the cache
 * (CLAIM_CACHE_GENERATION).
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
  private readonly previousMetaKey: string;
  private readonly namespace: string;
  private readonly generationCheckMs: number;
  private readonly fenceDelayMs: number;
  /** Only the writer fences off the previous format: its processes are the ones that write. */
  protected fencesPreviousFormat = false;
  /** `<ns>:s2:<generation>:` while the connected Redis is known to serve the current generation. */
  private prefix?: string;
  /**
   * Until when (this process's clock) the generation is known to be closed and new: nothing reads
   * it, and it opens empty. A write until then has nothing to correct and may be skipped.
   */
  private closedUntil = 0;
  /**
   * Epoch milliseconds (Redis's clock): the generation takes no license event produced earlier.
   * Set with `prefix`; 0 except in a generation that fenced off the previous format.
   */
  protected appliesFrom = 0;
  private checkTimer?: NodeJS.Timeout;
  /** Counts dropped connections: a check that straddles one must not confirm the next server. */
  private disconnects = 0;
  private readonly outage = new ThrottledWarning(this.logger);
  private down = false;

  constructor(options: SerialStatusReaderOptions) {
    this.namespace = options.namespace;
    this.generationCheckMs = options.generationCheckMs ?? GENERATION_CHECK_MS;
    this.fenceDelayMs = options.fenceDelayMs ?? FENCE_DELAY_MS;
    this.metaKey = cacheMetaKey(options.namespace);
    this.previousMetaKey = previousCacheMetaKey(options.namespace);
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
    this.redis.defineCommand('claimCacheGeneration', { numberOfKeys: 2, lua: CLAIM_CACHE_GENERATION });
    this.redis.on('close', () => {
      this.disconnects++;
      this.prefix = undefined;
      this.closedUntil = 0;
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
    // Taken before the claim runs: the generation opens no earlier than this plus its delay.
    const sentAt = Date.now();
    try {
      const info = await this.redis.info('server');
      const runId = /^run_id:(\w+)/m.exec(info)?.[1];
      if (!runId) throw new Error('INFO server has no run_id');
      const [generation, opensInMs, appliesFrom] = await this.redis.claimCacheGeneration(
        this.metaKey,
        this.previousMetaKey,
        runId,
        randomBytes(6).toString('hex'),
        this.fencesPreviousFormat ? '1' : '0',
        this.fenceDelayMs,
      );
      const prefix = serialKeyPrefix(this.namespace, generation);
      if (disconnects !== this.disconnects) return; // the 'ready' of the new connection checks again
      if (opensInMs > 0) {
        // Processes of the previous format may still write: the next check after the delay opens it.
        this.prefix = undefined;
        this.closedUntil = sentAt + opensInMs;
        return;
      }
      this.closedUntil = 0;
      this.appliesFrom = appliesFrom;
      if (this.prefix !== undefined && this.prefix !== prefix) {
        this.logger.warn({
          msg: 'redis is not the process the cache was filled in (restarted or failed over): starting a cold cache',
          generation,
        });
      }
      this.prefix = prefix;
    } catch (error) {
      this.prefix = undefined;
      this.closedUntil = 0;
      this.warn('check generation', error);
    }
  }

  /**
   * Whether the generation is closed and new for sure right now. A write may then be skipped:
   * no one reads the entries yet, and the generation opens empty, to be filled from PostgreSQL.
   */
  protected get closedAndNew(): boolean {
    return this.prefix === undefined && Date.now() < this.closedUntil;
  }

  /** How long the generation stays closed and new for sure: 0 when it is not. */
  get closedForMs(): number {
    return this.closedAndNew ? this.closedUntil - Date.now() : 0;
  }

  /** The key prefix of the current generation, or a failure when there is none to trust. */
  protected currentPrefix(): string {
    if (this.prefix === undefined) throw new Error('the cache generation of this Redis is not confirmed yet');
    return this.prefix;
  }

  /** An organization's serials, in one MGET. */
  async getMany(orgId: string, serials: readonly string[]): Promise<CacheLookup> {
    let values: (string | null)[];
    try {
      const prefix = this.currentPrefix();
      const orgPrefix = `${prefix}${orgId}:`;
      const keys = new Array<string>(serials.length);
      for (let i = 0; i < serials.length; i++) keys[i] = orgPrefix + serials[i];
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
        const entry = decodeEntry(value, orgId, serial);
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
    this.fencesPreviousFormat = true;
    this.redis.defineCommand('putSerialStatus', { numberOfKeys: 1, lua: PUT_SERIAL_STATUS });
  }

  /**
   * Statuses, each under its own organization. `producedAt` (epoch ms, one per status) says when
   * each was produced, for license events: one produced before the generation's `appliesFrom` is
   * left out (CLAIM_CACHE_GENERATION), and counts as applied.
   */
  putMany(statuses: readonly SerialStatus[], producedAt?: readonly number[]): Promise<boolean> {
    return this.put(statuses, '', [], producedAt);
  }

  putNegative(orgId: string, serials: readonly string[]): Promise<boolean> {
    return this.put([], orgId, serials);
  }

  /**
   * Statuses (each under its own organization) and the serials `orgId` has no license of, in one
   * pipeline. A negative entry never replaces a status (NX): a license created between the lookup
   * and this write must not be hidden. Resolves to false when the write was skipped: the
   * generation is closed and new (closedForMs), so nothing reads it yet. A status whose
   * `producedAt` is before the generation's `appliesFrom` is left out (putMany).
   */
  async put(
    statuses: readonly SerialStatus[],
    orgId: string,
    unknown: readonly string[],
    producedAt?: readonly number[],
  ): Promise<boolean> {
    if (statuses.length === 0 && unknown.length === 0) return true;
    // A write-through then succeeds, rather than failing a revocation for a cache no one reads.
    // A license event comes back once the generation opens, and is applied if it is not older.
    if (this.closedAndNew) return false;
    let prefix: string;
    try {
      prefix = this.currentPrefix();
    } catch (error) {
      throw this.failed('put', error);
    }
    // Read with the prefix, in the same synchronous step: both belong to one generation.
    const appliesFrom = this.appliesFrom;
    const pipeline = this.redis.pipeline();
    for (const [i, status] of statuses.entries()) {
      if (producedAt && producedAt[i]! < appliesFrom) continue;
      pipeline.putSerialStatus(
        `${prefix}${status.org_id}:${status.serial}`,
        ...putArguments(status, this.options.ttlSeconds),
      );
    }
    for (const serial of unknown) {
      pipeline.set(
        `${prefix}${orgId}:${serial}`,
        NEGATIVE_ENTRY,
        'EX',
        this.options.negativeTtlSeconds,
        'NX',
      );
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
    return true;
  }
}
