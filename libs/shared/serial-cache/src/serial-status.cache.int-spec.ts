import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { SerialStatus } from '@licensing/contracts';
import { redisConnection } from '@licensing/shared/config';
import { uniqueNamespace, waitFor, TEST_REDIS_URL } from '@licensing/shared/testing';
import { SerialStatusCache, cacheMetaKey, serialCacheKey } from './serial-status.cache';

describe('SerialStatusCache against the real Redis', () => {
  const namespace = uniqueNamespace('rc');
  const cache = new SerialStatusCache({
    connection: redisConnection({ REDIS_URL: TEST_REDIS_URL }),
    namespace,
    ttlSeconds: 60,
    negativeTtlSeconds: 5,
  });
  const redis = new Redis(TEST_REDIS_URL);

  const status = (serial: string, changes: Partial<SerialStatus> = {}): SerialStatus => ({
    serial,
    org_id: randomUUID(),
    license_id: randomUUID(),
    product_id: randomUUID(),
    status: 'active',
    revoked_at: null,
    valid_until: null,
    max_seats: 3,
    version: 1_000,
    ...changes,
  });
  const key = (serial: string): Promise<string> => serialCacheKey(redis, namespace, serial);
  const stored = async (serial: string): Promise<SerialStatus | string | null> => {
    const value = await redis.get(await key(serial));
    return value === null || value === '-' ? value : (JSON.parse(value) as SerialStatus);
  };

  beforeAll(async () => {
    // The outage test's warnings are expected; keep the test output for failures.
    Logger.overrideLogger(false);
    await cache.onModuleInit();
  });
  afterAll(async () => {
    const keys = await redis.keys(`${namespace}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await Promise.all([cache.onApplicationShutdown(), redis.quit()]);
  });

  it('keys entries <namespace>:serial:<generation>:<serial>, a negative entry as "-", with their TTLs', async () => {
    await cache.put([status('KEYED')], ['KEYED-UNKNOWN']);
    expect(await stored('KEYED')).toMatchObject({ serial: 'KEYED', status: 'active' });
    expect(await stored('KEYED-UNKNOWN')).toBe('-');
    expect(await key('KEYED')).toMatch(new RegExp(`^${namespace}:serial:[0-9a-f]{12}:KEYED$`));
    const ttl = await redis.ttl(await key('KEYED'));
    expect(ttl).toBeGreaterThan(50);
    expect(ttl).toBeLessThanOrEqual(60);
    expect(await redis.ttl(await key('KEYED-UNKNOWN'))).toBeLessThanOrEqual(5);
  });

  it('answers a batch with hits, negatives and misses in one MGET round trip', async () => {
    const hit = status('HIT-1');
    await cache.putMany([hit]);
    await cache.putNegative(['NEG-1']);

    // MONITOR shows every command the server runs; ours are the ones naming this namespace.
    const monitor = await redis.monitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.some((arg) => arg.startsWith(`${namespace}:`))) seen.push(args);
    });
    try {
      const lookup = await cache.getMany(['MISS-1', 'HIT-1', 'NEG-1', 'MISS-2']);
      expect(lookup).toEqual({ hits: [hit], negatives: ['NEG-1'], misses: ['MISS-1', 'MISS-2'] });
      // A marker after the lookup: once it shows, every command of the lookup has shown before it.
      await redis.exists(`${namespace}:marker`);
      await waitFor(() => seen.some((args) => args.includes(`${namespace}:marker`)), { what: 'the marker' });
      const lookupCommands = seen.filter((args) => !args.includes(`${namespace}:marker`));
      expect(lookupCommands.map((args) => args[0]!.toLowerCase())).toEqual(['mget']);
      expect(lookupCommands[0]!.slice(1)).toEqual(
        await Promise.all(['MISS-1', 'HIT-1', 'NEG-1', 'MISS-2'].map(key)),
      );
    } finally {
      monitor.disconnect();
    }
  });

  it('an older version does not overwrite a newer one, a newer one does', async () => {
    await cache.putMany([status('VERSIONED', { version: 2_000, max_seats: 5 })]);
    await cache.putMany([status('VERSIONED', { version: 1_000, max_seats: 1 })]);
    expect(await stored('VERSIONED')).toMatchObject({ version: 2_000, max_seats: 5 });

    await cache.putMany([status('VERSIONED', { version: 3_000, status: 'suspended' })]);
    expect(await stored('VERSIONED')).toMatchObject({ version: 3_000, status: 'suspended' });
  });

  it('a revoked entry stays revoked, even against a newer non-revoked version', async () => {
    const revokedAt = new Date(5_000).toISOString();
    await cache.putMany([status('REVOKED', { version: 5_000, status: 'revoked', revoked_at: revokedAt })]);
    await cache.putMany([status('REVOKED', { version: 9_000, status: 'active' })]);
    await cache.putMany([status('REVOKED', { version: 9_000, status: 'suspended' })]);
    expect(await stored('REVOKED')).toMatchObject({
      status: 'revoked',
      revoked_at: revokedAt,
      version: 5_000,
    });
  });

  it('a status replaces a negative entry, but a negative entry never replaces a status', async () => {
    await cache.putNegative(['LATE']);
    await cache.putMany([status('LATE')]);
    expect(await stored('LATE')).toMatchObject({ serial: 'LATE', status: 'active' });

    await cache.putNegative(['LATE']);
    expect(await stored('LATE')).toMatchObject({ serial: 'LATE', status: 'active' });
  });

  it('a corrupt entry is a miss, and is replaced by the next write', async () => {
    await redis.set(await key('CORRUPT'), '{not json');
    expect(await cache.getMany(['CORRUPT'])).toEqual({ hits: [], negatives: [], misses: ['CORRUPT'] });
    await cache.putMany([status('CORRUPT')]);
    expect(await stored('CORRUPT')).toMatchObject({ serial: 'CORRUPT' });
  });

  it('starts a new, empty generation when the Redis process is not the one the cache was filled in', async () => {
    await cache.putMany([status('BEFORE-RESTART', { status: 'active' })]);
    const before = await key('BEFORE-RESTART');
    // What a restart from a snapshot looks like: the stored run_id is not the running server's.
    await redis.hset(cacheMetaKey(namespace), 'run_id', 'a-process-that-is-gone');
    await cache.checkGeneration();
    expect(await key('BEFORE-RESTART')).not.toBe(before);
    expect(await cache.getMany(['BEFORE-RESTART'])).toEqual({
      hits: [],
      negatives: [],
      misses: ['BEFORE-RESTART'],
    });
    // The same process again: the generation stays, and so does what it holds.
    await cache.putMany([status('AFTER-RESTART')]);
    await cache.checkGeneration();
    expect((await cache.getMany(['AFTER-RESTART'])).hits).toHaveLength(1);
  });

  it('two caches on one Redis agree on one generation', async () => {
    const twin = new SerialStatusCache({
      connection: redisConnection({ REDIS_URL: TEST_REDIS_URL }),
      namespace,
      ttlSeconds: 60,
      negativeTtlSeconds: 5,
    });
    await twin.onModuleInit();
    try {
      await twin.putMany([status('TWIN')]);
      expect((await cache.getMany(['TWIN'])).hits).toHaveLength(1);
    } finally {
      await twin.onApplicationShutdown();
    }
  });

  it('fails at once, without queueing, when Redis cannot be reached', async () => {
    // Port 1 on loopback: nothing listens, the connection is refused.
    const unreachable = new SerialStatusCache({
      connection: redisConnection({ REDIS_URL: 'redis://127.0.0.1:1' }),
      namespace,
      ttlSeconds: 60,
      negativeTtlSeconds: 5,
    });
    await unreachable.onModuleInit();
    try {
      const started = Date.now();
      await expect(unreachable.getMany(['ANY'])).rejects.toThrow();
      await expect(unreachable.putMany([status('ANY')])).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(200);
    } finally {
      await unreachable.onApplicationShutdown();
    }
  });
});
