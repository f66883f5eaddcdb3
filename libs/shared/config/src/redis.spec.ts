import { ConfigError, loadConfig } from './env';
import { redisConnection, redisEnv } from './redis';

describe('redisConnection', () => {
  it('connects to the address of REDIS_URL, with its credentials and database', () => {
    expect(redisConnection({ REDIS_URL: 'redis://cache.internal:6380' })).toEqual({
      host: 'cache.internal',
      port: 6380,
    });
    expect(redisConnection({ REDIS_URL: 'redis://app:p%40ss@cache.internal/2' })).toEqual({
      host: 'cache.internal',
      port: 6379,
      username: 'app',
      password: 'p@ss',
      db: 2,
    });
  });

  it('speaks TLS to a rediss:// endpoint (a managed Redis)', () => {
    expect(redisConnection({ REDIS_URL: 'rediss://:secret@redis.example.com:6380' })).toEqual({
      host: 'redis.example.com',
      port: 6380,
      password: 'secret',
      tls: {},
    });
  });

  it('asks the sentinels for the master when REDIS_SENTINELS is set, keeping the URL’s credentials', () => {
    const connection = redisConnection({
      REDIS_URL: 'redis://:secret@ignored/1',
      REDIS_SENTINELS: 'sentinel-0:26379, sentinel-1, [fd00::2]:26380',
      REDIS_SENTINEL_NAME: 'licensing',
      REDIS_SENTINEL_PASSWORD: 'watch',
    });
    expect(connection).toMatchObject({
      password: 'secret',
      db: 1,
      sentinels: [
        { host: 'sentinel-0', port: 26379 },
        { host: 'sentinel-1', port: 26379 },
        { host: 'fd00::2', port: 26380 },
      ],
      name: 'licensing',
      sentinelPassword: 'watch',
      failoverDetector: true,
    });
    expect(connection).not.toHaveProperty('host');
    // A demoted master answering READONLY makes the client reconnect (to the new master).
    expect(
      connection.reconnectOnError!(new Error("READONLY You can't write against a read only replica.")),
    ).toBe(true);
    expect(connection.reconnectOnError!(new Error('ERR unknown command'))).toBe(false);
  });

  it('with rediss:// and sentinels, speaks TLS to the master the sentinels name', () => {
    expect(redisConnection({ REDIS_URL: 'rediss://redis', REDIS_SENTINELS: 'sentinel:26379' })).toMatchObject(
      { tls: {}, enableTLSForSentinelMode: true, name: 'mymaster' },
    );
  });

  it('refuses a malformed sentinel list when the configuration loads', () => {
    const schema = redisEnv('test');
    expect(loadConfig(schema, { REDIS_SENTINELS: 'a:1,b:2' })).toMatchObject({
      REDIS_SENTINELS: 'a:1,b:2',
      REDIS_SENTINEL_NAME: 'mymaster',
    });
    expect(() => loadConfig(schema, { REDIS_SENTINELS: 'a:1,b:port' })).toThrow(ConfigError);
    expect(() => loadConfig(schema, { REDIS_SENTINELS: 'a:1:2' })).toThrow(
      /REDIS_SENTINELS must list host:port/,
    );
  });
});
