import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { SerialStatus } from '@licensing/contracts';
import { redisConnection } from '@licensing/shared/config';
import { uniqueNamespace, waitFor, TEST_REDIS_URL } from '@licensing/shared/testing';
import { decodeEntry, encodeEntry } from './serial-entry';
import {
  SerialStatusCache,
  SerialStatusReader,
  cacheMetaKey,
  previousCacheMetaKey,
  serialCacheKey,
} from './serial-status.cache';

describe('SerialStatusCache against the real Redis', () => {
  const namespace = uniqueNamespace('rc');
  const cache = new SerialStatusCache({
    connection: redisConnection({ REDIS_URL: TEST_REDIS_URL }),
    namespace,
    ttlSeconds: 60,
    negativeTtlSeconds: 5,
  });
  const redis = new Redis(TEST_REDIS_URL);
  const org = randomUUID();

  const status = (serial: string, changes: Partial<SerialStatus> = {}): SerialStatus => ({
    serial,
    org_id: org,
    license_id: randomUUID(),
    product_id: randomUUID(),
    status: 'active',
    revoked_at: null,
    valid_until: null,
    max_seats: 3,
    version: 1_000,
    ...changes,
  });
  const key = (serial: string, orgId = org): Promise<string> =>
    serialCacheKey(redis, namespace, orgId, serial);
  const stored = async (serial: string): Promise<SerialStatus | string | null | undefined> => {
    const value = await redis.get(await key(serial));
    return value === null || value === '-' ? value : decodeEntry(value, org, serial);
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

  it('keys entries <namespace>:s2:<generation>:<org>:<serial>, a negative entry as "-", with their TTLs', async () => {
    await cache.put([status('KEYED')], org, ['KEYED-UNKNOWN']);
    expect(await stored('KEYED')).toMatchObject({ serial: 'KEYED', status: 'active' });
    expect(await stored('KEYED-UNKNOWN')).toBe('-');
    expect(await key('KEYED')).toMatch(new RegExp(`^${namespace}:s2:[0-9a-f]{12}:${org}:KEYED$`));
    const ttl = await redis.ttl(await key('KEYED'));
    expect(ttl).toBeGreaterThan(50);
    expect(ttl).toBeLessThanOrEqual(60);
    expect(await redis.ttl(await key('KEYED-UNKNOWN'))).toBeLessThanOrEqual(5);
  });

  it('answers a batch with hits, negatives and misses in one MGET round trip', async () => {
    const hit = status('HIT-1');
    await cache.putMany([hit]);
    await cache.putNegative(org, ['NEG-1']);

    // MONITOR shows every command the server runs; ours are the ones naming this namespace.
    const monitor = await redis.monitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.some((arg) => arg.startsWith(`${namespace}:`))) seen.push(args);
    });
    try {
      const lookup = await cache.getMany(org, ['MISS-1', 'HIT-1', 'NEG-1', 'MISS-2']);
      expect(lookup).toEqual({ hits: [hit], negatives: ['NEG-1'], misses: ['MISS-1', 'MISS-2'] });
      // A marker after the lookup: once it shows, every command of the lookup has shown before it.
      await redis.exists(`${namespace}:marker`);
      await waitFor(() => seen.some((args) => args.includes(`${namespace}:marker`)), { what: 'the marker' });
      const lookupCommands = seen.filter((args) => !args.includes(`${namespace}:marker`));
      expect(lookupCommands.map((args) => args[0]!.toLowerCase())).toEqual(['mget']);
      expect(lookupCommands[0]!.slice(1)).toEqual(
        await Promise.all(['MISS-1', 'HIT-1', 'NEG-1', 'MISS-2'].map((serial) => key(serial))),
      );
    } finally {
      monitor.disconnect();
    }
  });

  it('holds only what an answer needs: about a third of the JSON of a status, no serial or organization', () => {
    const full = status('LK-7F3A-9C2D-41B8-E0A6', {
      status: 'revoked',
      revoked_at: '2026-11-26T23:41:07.123Z',
      valid_until: '2027-11-26T00:00:00.000Z',
      version: 1_795_000_000_123,
    });
    const entry = encodeEntry(full);
    expect(Buffer.byteLength(entry)).toBeLessThanOrEqual(Buffer.byteLength(JSON.stringify(full)) / 2);
    expect(entry).not.toContain(full.serial);
    expect(entry).not.toContain(full.org_id);
    expect(decodeEntry(entry, full.org_id, full.serial)).toEqual(full);
    const bare = status('S');
    expect(decodeEntry(encodeEntry(bare), org, 'S')).toEqual(bare);
  });

  it("never answers another organization's entry: the organization is in the key", async () => {
    const other = randomUUID();
    const owned = status('TENANT');
    await cache.putMany([owned]);
    expect(await cache.getMany(other, ['TENANT'])).toEqual({ hits: [], negatives: [], misses: ['TENANT'] });
    // Another organization learning that it has no such serial hides nothing from the owner.
    await cache.putNegative(other, ['TENANT']);
    expect(await cache.getMany(other, ['TENANT'])).toEqual({ hits: [], negatives: ['TENANT'], misses: [] });
    expect((await cache.getMany(org, ['TENANT'])).hits).toEqual([owned]);
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
    await cache.putNegative(org, ['LATE']);
    await cache.putMany([status('LATE')]);
    expect(await stored('LATE')).toMatchObject({ serial: 'LATE', status: 'active' });

    await cache.putNegative(org, ['LATE']);
    expect(await stored('LATE')).toMatchObject({ serial: 'LATE', status: 'active' });
  });

  it('a corrupt entry is a miss, and is replaced by the next write', async () => {
    for (const corrupt of ['{"status":"active"}', 'active|1|||3|a', 'gone|1|||3|a|b']) {
      await redis.set(await key('CORRUPT'), corrupt);
      expect(await cache.getMany(org, ['CORRUPT'])).toEqual({ hits: [], negatives: [], misses: ['CORRUPT'] });
      await cache.putMany([status('CORRUPT')]);
      expect(await stored('CORRUPT')).toMatchObject({ serial: 'CORRUPT' });
    }
  });

  it('starts a new, empty generation when the Redis process is not the one the cache was filled in', async () => {
    await cache.putMany([status('BEFORE-RESTART', { status: 'active' })]);
    const before = await key('BEFORE-RESTART');
    // What a restart from a snapshot looks like: the stored run_id is not the running server's.
    // It was a generation that fenced off the previous format: the new one forgets that.
    await redis.hset(
      cacheMetaKey(namespace),
      'run_id',
      'a-process-that-is-gone',
      'applies_from',
      Date.now() + 60_000,
    );
    await cache.checkGeneration();
    expect(await redis.hget(cacheMetaKey(namespace), 'applies_from')).toBeNull();
    expect(await key('BEFORE-RESTART')).not.toBe(before);
    expect(await cache.getMany(org, ['BEFORE-RESTART'])).toEqual({
      hits: [],
      negatives: [],
      misses: ['BEFORE-RESTART'],
    });
    // The same process again: the generation stays, and so does what it holds. It takes a
    // license event of any age (its TTL and the version guard keep it right).
    await cache.putMany([status('AFTER-RESTART')], [0]);
    await cache.checkGeneration();
    expect((await cache.getMany(org, ['AFTER-RESTART'])).hits).toHaveLength(1);
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
      expect((await cache.getMany(org, ['TWIN'])).hits).toHaveLength(1);
    } finally {
      await twin.onApplicationShutdown();
    }
  });

  describe('a rolling upgrade from the JSON entries of the previous release', () => {
    /** The previous release's generation check, verbatim: it still runs in the old processes. */
    const PREVIOUS_CLAIM = `
if redis.call('HGET', KEYS[1], 'run_id') == ARGV[1] then
  local generation = redis.call('HGET', KEYS[1], 'generation')
  if generation then return generation end
end
redis.call('HSET', KEYS[1], 'run_id', ARGV[1], 'generation', ARGV[2])
return ARGV[2]
`;
    const upgrade = uniqueNamespace('rcu');
    /** An old process's claim; after `DEL` of the fence first, in the same script, when `afterRestart`. */
    const previousClaim = async ({ afterRestart = false } = {}): Promise<unknown> => {
      const runId = /^run_id:(\w+)/m.exec(await redis.info('server'))![1]!;
      // One script: a writer's own check (every 100 ms here) cannot fence in between.
      const script = (afterRestart ? "redis.call('DEL', KEYS[1])\n" : '') + PREVIOUS_CLAIM;
      return redis.eval(script, 1, previousCacheMetaKey(upgrade), runId, 'a1b2c3d4e5f6');
    };
    const open = (cacheOf: SerialStatusReader) =>
      cacheOf.getMany(org, ['ANY']).then(
        () => true,
        () => false,
      );
    afterAll(async () => {
      const keys = await redis.keys(`${upgrade}:*`);
      if (keys.length > 0) await redis.del(...keys);
    });

    it('a writer fences off the old processes and opens its generation only after they stopped', async () => {
      // An old process is serving: its generation hash exists.
      expect(await previousClaim()).toBe('a1b2c3d4e5f6');
      const options = { connection: redisConnection({ REDIS_URL: TEST_REDIS_URL }), namespace: upgrade };
      const reader = new SerialStatusReader({ ...options, generationCheckMs: 100 });
      const writer = new SerialStatusCache({
        ...options,
        ttlSeconds: 60,
        negativeTtlSeconds: 5,
        generationCheckMs: 100,
        fenceDelayMs: 1_500,
      });
      try {
        // A reader alone writes nothing, so it leaves the old processes alone.
        await reader.onModuleInit();
        expect(await open(reader)).toBe(true);
        expect(await redis.type(previousCacheMetaKey(upgrade))).toBe('hash');

        const fenced = Date.now();
        await writer.onModuleInit();
        // The old processes' next check fails: they stop using the cache and ask PostgreSQL.
        await expect(previousClaim()).rejects.toThrow(/WRONGTYPE/);
        // Nothing reads or writes the new generation until every old process has checked again.
        expect(await open(writer)).toBe(false);
        // A write has nothing to correct in a generation no one reads and that opens empty: it
        // is skipped without failing, so a revocation written through is not refused meanwhile,
        // and it says so, so that a license event is applied again once the generation opens.
        expect(writer.closedForMs).toBeGreaterThan(0);
        expect(await writer.putMany([status('EARLY')])).toBe(false);
        await waitFor(() => open(reader).then((isOpen) => !isOpen), { what: 'the reader closing' });
        await waitFor(() => open(writer), { what: 'the generation opening', timeoutMs: 5_000 });
        expect(Date.now() - fenced).toBeGreaterThanOrEqual(1_400);
        await waitFor(() => open(reader), { what: 'the reader opening', timeoutMs: 5_000 });
        expect((await writer.getMany(org, ['EARLY'])).misses).toEqual(['EARLY']);

        // A license event produced before the generation opened is left out: an old process may
        // have acknowledged a later change of that license, written only to its old entries. A
        // later one is applied. (This process's clock stands for Redis's: one machine.)
        const opened = Number(await redis.hget(cacheMetaKey(upgrade), 'applies_from'));
        expect(opened).toBeGreaterThanOrEqual(fenced + 1_400);
        expect(await writer.putMany([status('OLD-EVENT'), status('NEW-EVENT')], [opened - 1, opened])).toBe(
          true,
        );
        expect(await writer.getMany(org, ['OLD-EVENT', 'NEW-EVENT'])).toMatchObject({
          hits: [{ serial: 'NEW-EVENT' }],
          misses: ['OLD-EVENT'],
        });
        // A fill or a write-through (no production time) is written as before.
        expect(await writer.putMany([status('OLD-EVENT')])).toBe(true);
        expect((await writer.getMany(org, ['OLD-EVENT'])).hits).toHaveLength(1);

        // Once fenced, a writer checking again does not close the generation.
        expect(writer.closedForMs).toBe(0);
        expect(await writer.putMany([status('FENCED')])).toBe(true);
        await writer.checkGeneration();
        expect((await writer.getMany(org, ['FENCED'])).hits).toHaveLength(1);

        // A Redis restart drops the fence, and an old process claims its generation again before a
        // writer checks: it may write around the new entries, so they are dropped and a new,
        // closed generation starts.
        const before = await serialCacheKey(redis, upgrade, org, 'FENCED');
        await previousClaim({ afterRestart: true });
        await writer.checkGeneration();
        expect(await open(writer)).toBe(false);
        expect(await serialCacheKey(redis, upgrade, org, 'FENCED')).not.toBe(before);
        await waitFor(() => open(writer), { what: 'the new generation opening', timeoutMs: 5_000 });
        expect((await writer.getMany(org, ['FENCED'])).misses).toEqual(['FENCED']);
      } finally {
        await Promise.all([reader.onApplicationShutdown(), writer.onApplicationShutdown()]);
      }
    });
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
      await expect(unreachable.getMany(org, ['ANY'])).rejects.toThrow();
      await expect(unreachable.putMany([status('ANY')])).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(200);
    } finally {
      await unreachable.onApplicationShutdown();
    }
  });
});
