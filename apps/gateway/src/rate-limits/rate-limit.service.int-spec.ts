import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL, testEnv, uniqueNamespace, waitFor } from '@licensing/shared/testing';
import { loadGatewayConfig } from '../config';
import { AuthContext } from '../http/auth-context';
import { OrganizationLimitsService } from '../identity/organization-limits.service';
import { RateLimitService } from './rate-limit.service';
import { RateLimits } from '../identity/rate-limit-settings';

/** The GCRA script against the machine's Redis, with limits given directly instead of read from PostgreSQL. */
describe('RateLimitService (Redis)', () => {
  const namespace = uniqueNamespace();
  const redis = new Redis(TEST_REDIS_URL);
  let limits: RateLimits;
  let service: RateLimitService;
  const organizations = { limitsOf: () => limits } as unknown as OrganizationLimitsService;
  const caller = (): AuthContext => ({
    orgId: randomUUID(),
    keyId: randomUUID(),
    prefix: 'lk_test000',
    name: 'test',
    scopes: ['admin'],
    reach: { kind: 'organization', admin: true },
  });

  beforeAll(async () => {
    service = new RateLimitService(loadGatewayConfig(testEnv(namespace)), organizations);
    await service.onModuleInit();
  });
  beforeEach(() => {
    limits = {
      admin: { limit: 3, window_seconds: 60 },
      read: { limit: 2, window_seconds: 1 },
      client: { limit: 10, window_seconds: 60 },
      activations: { limit: 1, window_seconds: 3600 },
    };
  });
  afterAll(async () => {
    await service.onApplicationShutdown();
    const keys = await redis.keys(`${namespace}:ratelimit:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('allows the whole limit at once, then refuses, and a refusal spends nothing', async () => {
    const auth = caller();
    const remaining = [];
    for (let i = 0; i < 3; i++) remaining.push((await service.consume(auth, 'admin')).state?.remaining);
    expect(remaining).toEqual([2, 1, 0]);
    const refused = await service.consume(auth, 'admin');
    expect(refused).toMatchObject({ allowed: false, state: { remaining: 0 } });
    // 3 per 60 s: one request every 20 s; the first of the three was just now.
    expect(refused.state!.retryAfterSeconds).toBeGreaterThan(18);
    expect(refused.state!.retryAfterSeconds).toBeLessThanOrEqual(20);
    expect(refused.state!.resetSeconds).toBeLessThanOrEqual(60);
    const stored = await redis.get(`${namespace}:ratelimit:{${auth.orgId}}:key:${auth.keyId}:admin`);
    expect((await service.consume(auth, 'admin')).allowed).toBe(false);
    expect(await redis.get(`${namespace}:ratelimit:{${auth.orgId}}:key:${auth.keyId}:admin`)).toBe(stored);
    expect(service.counters.rejected).toBeGreaterThanOrEqual(2);
  });

  it('refills at the rate of the limit, and the key expires once the budget is whole', async () => {
    const auth = caller();
    expect((await service.consume(auth, 'read')).allowed).toBe(true);
    expect((await service.consume(auth, 'read')).allowed).toBe(true);
    expect((await service.consume(auth, 'read')).allowed).toBe(false);
    const key = `${namespace}:ratelimit:{${auth.orgId}}:key:${auth.keyId}:read`;
    expect(await redis.pttl(key)).toBeLessThanOrEqual(1000);
    // 2 per second: a request is allowed again half a second later.
    await waitFor(async () => (await service.consume(auth, 'read')).allowed, {
      what: 'the budget to refill',
    });
  });

  it('spends from several budgets atomically: refused by one, none is spent', async () => {
    const auth = caller();
    const allowed = await service.consume(auth, 'client', 'id:one');
    expect(allowed).toMatchObject({ allowed: true, limit: limits.activations, state: { remaining: 0 } });
    const refused = await service.consume(auth, 'client', 'id:one');
    expect(refused).toMatchObject({ allowed: false, limit: limits.activations });
    expect(refused.state!.retryAfterSeconds).toBeGreaterThan(3500);
    // Only the allowed request was spent from the key's client budget.
    expect(await service.consume(auth, 'client')).toMatchObject({ allowed: true, state: { remaining: 8 } });
    // Budgets are per key and class: another key, or another class, starts whole.
    expect((await service.consume({ ...auth, keyId: randomUUID() }, 'client')).state?.remaining).toBe(9);
    expect((await service.consume(auth, 'admin')).state?.remaining).toBe(2);
  });
});
