/**
 * The revocation cache behind Redis Sentinel: a master, a replica and a sentinel of the test's own
 * (redis-server processes on free ports, stopped by their PID). The cache finds the master through
 * the sentinel, and after a failover (`SENTINEL FAILOVER`) it follows the new master by itself, in
 * a new generation: the promoted replica may have missed the last writes, so nothing cached before
 * is trusted.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { SerialStatus } from '@licensing/contracts';
import { redisConnection } from '@licensing/shared/config';
import { freePort, uniqueNamespace, waitFor } from '@licensing/shared/testing';
import { SerialStatusCache, serialCacheKey } from './serial-status.cache';

const org = randomUUID();
const status = (serial: string): SerialStatus => ({
  serial,
  org_id: org,
  license_id: randomUUID(),
  product_id: randomUUID(),
  status: 'active',
  revoked_at: null,
  valid_until: null,
  max_seats: 3,
  version: 1_000,
});

describe('SerialStatusCache through Redis Sentinel', () => {
  const namespace = uniqueNamespace('sentinel');
  const dir = mkdtempSync(join(tmpdir(), 'licensing-sentinel-'));
  const children: ChildProcess[] = [];
  const clients: Redis[] = [];
  let cache: SerialStatusCache | undefined;

  const redisServer = (args: string[]) => {
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    children.push(child);
  };
  const client = (port: number) => {
    const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
    clients.push(redis);
    return redis;
  };

  afterAll(async () => {
    await cache?.onApplicationShutdown();
    for (const redis of clients) redis.disconnect();
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
            child.once('exit', resolve);
            child.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the master through the sentinel and follows a failover to the promoted replica', async () => {
    Logger.overrideLogger(false);
    const [masterPort, replicaPort, sentinelPort] = [await freePort(), await freePort(), await freePort()];
    const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
    redisServer(['--port', String(masterPort), ...common, '--dbfilename', 'master.rdb']);
    redisServer([
      '--port',
      String(replicaPort),
      ...common,
      '--dbfilename',
      'replica.rdb',
      '--replicaof',
      '127.0.0.1',
      String(masterPort),
    ]);
    // A sentinel rewrites its configuration file: it needs one of its own.
    const sentinelConf = join(dir, 'sentinel.conf');
    writeFileSync(
      sentinelConf,
      [
        `port ${sentinelPort}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor licensing 127.0.0.1 ${masterPort} 1`,
        'sentinel down-after-milliseconds licensing 1000',
        'sentinel failover-timeout licensing 5000',
        '',
      ].join('\n'),
    );
    redisServer([sentinelConf, '--sentinel']);

    const master = client(masterPort);
    const replica = client(replicaPort);
    const sentinel = client(sentinelPort);
    // The replica is in sync, and the sentinel knows it (it can only fail over to a replica it knows).
    await waitFor(async () => /master_link_status:up/.test(await replica.info('replication')), {
      what: 'the replica in sync',
      timeoutMs: 15_000,
    });
    await waitFor(
      async () => {
        const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', 'licensing')) as string[][];
        return replicas.some((fields) => fields.includes(String(replicaPort)));
      },
      { what: 'the sentinel to know the replica', timeoutMs: 15_000 },
    );

    cache = new SerialStatusCache({
      // With sentinels, the URL's host is not used: the sentinel names the master.
      connection: redisConnection({
        REDIS_URL: 'redis://unused:6379',
        REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`,
        REDIS_SENTINEL_NAME: 'licensing',
      }),
      namespace,
      ttlSeconds: 60,
      negativeTtlSeconds: 5,
    });
    await cache.onModuleInit();
    expect(cache.isConnected).toBe(true);
    await cache.putMany([status('BEFORE')]);
    expect((await cache.getMany(org, ['BEFORE'])).hits).toHaveLength(1);
    // Written on the master the sentinel named.
    expect(await master.exists(await serialCacheKey(master, namespace, org, 'BEFORE'))).toBe(1);

    // The sentinel refuses a failover (NOGOODSLAVE) until its view of the replica is fresh enough,
    // which on a loaded machine may take a few of its INFO rounds.
    await waitFor(
      async () => {
        try {
          await sentinel.call('SENTINEL', 'FAILOVER', 'licensing');
          return true;
        } catch (error) {
          if (/NOGOODSLAVE/.test(String(error))) return false;
          throw error;
        }
      },
      { what: 'the sentinel to start the failover', timeoutMs: 20_000, intervalMs: 500 },
    );
    await waitFor(async () => (await replica.call('ROLE'))?.toString().startsWith('master'), {
      what: 'the replica promoted',
      timeoutMs: 20_000,
    });

    // The cache moves to the promoted replica by itself, in a new generation.
    await waitFor(
      async () => {
        await cache!.checkGeneration();
        await cache!.putMany([status('AFTER')]);
        return (await replica.exists(await serialCacheKey(replica, namespace, org, 'AFTER'))) === 1;
      },
      { what: 'the cache writing to the new master', timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(cache.isConnected).toBe(true);
    const lookup = await cache.getMany(org, ['AFTER', 'BEFORE']);
    expect(lookup.hits.map((hit) => hit.serial)).toEqual(['AFTER']);
    expect(lookup.misses).toEqual(['BEFORE']);
  }, 60_000);
});
