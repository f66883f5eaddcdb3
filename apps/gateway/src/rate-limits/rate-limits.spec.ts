import {
  RateLimits,
  applyLimitChanges,
  defaultLimits,
  effectiveLimits,
  parseLimitChanges,
} from '../identity/rate-limit-settings';
import { decisionOf, licenseOf, rateLimitHeaders, routeClassOf } from './rate-limits';

const DEFAULTS: RateLimits = defaultLimits({
  RATE_LIMIT_WINDOW_SECONDS: 60,
  RATE_LIMIT_ADMIN: 100,
  RATE_LIMIT_READ: 200,
  RATE_LIMIT_CLIENT: 1000,
  RATE_LIMIT_ACTIVATIONS: 60,
  RATE_LIMIT_ACTIVATIONS_WINDOW_SECONDS: 3600,
});

describe('routeClassOf', () => {
  it.each([
    ['POST', ['client'], 'client'], // sync, validate, activations
    ['POST', ['read', 'client'], 'client'], // verify, check-revocation
    ['DELETE', ['client'], 'client'], // an activation
    ['GET', ['read', 'client'], 'client'], // a product's public key
    ['GET', ['read'], 'read'],
    ['GET', [], 'read'], // an admin-only GET is still a read
    ['POST', ['read'], 'read'], // a read-only POST
    ['POST', [], 'admin'],
    ['PATCH', undefined, 'admin'], // no @AllowScopes: admin-only
    ['DELETE', [], 'admin'],
  ] as const)('%s allowed to %j is %s', (method, scopes, expected) => {
    expect(routeClassOf(method, scopes)).toBe(expected);
  });
});

describe('limits', () => {
  it('takes the defaults from the configuration', () => {
    expect(DEFAULTS).toEqual({
      admin: { limit: 100, window_seconds: 60 },
      read: { limit: 200, window_seconds: 60 },
      client: { limit: 1000, window_seconds: 60 },
      activations: { limit: 60, window_seconds: 3600 },
    });
  });

  it("lets an organization's stored overrides win, and ignores what is unreadable in them", () => {
    const stored = {
      client: { limit: 5, window_seconds: 1 },
      read: { limit: 0, window_seconds: 60 },
      admin: 'lots',
      unknown: { limit: 1, window_seconds: 1 },
    };
    expect(effectiveLimits(DEFAULTS, stored)).toEqual({
      ...DEFAULTS,
      client: { limit: 5, window_seconds: 1 },
    });
    expect(effectiveLimits(DEFAULTS, null)).toEqual(DEFAULTS);
  });

  it('reads the CLI changes, with the window in seconds, minutes, hours or days', () => {
    expect(
      parseLimitChanges(['client=900000/60', 'activations=120/1h', 'read=10/2m', 'admin=default']),
    ).toEqual(
      new Map([
        ['client', { limit: 900000, window_seconds: 60 }],
        ['activations', { limit: 120, window_seconds: 3600 }],
        ['read', { limit: 10, window_seconds: 120 }],
        ['admin', null],
      ]),
    );
    expect(() => parseLimitChanges(['writes=1/60'])).toThrow(/is not/);
    expect(() => parseLimitChanges(['read=0/60'])).toThrow(/positive integers/);
    expect(() => parseLimitChanges(['read=10'])).toThrow(/is not/);
  });

  it('applies changes over the stored overrides, and stores null once none is left', () => {
    const stored = { read: { limit: 1, window_seconds: 60 } };
    const set = applyLimitChanges(stored, parseLimitChanges(['client=5/1s']));
    expect(set).toEqual({ read: { limit: 1, window_seconds: 60 }, client: { limit: 5, window_seconds: 1 } });
    expect(applyLimitChanges(set, parseLimitChanges(['read=default', 'client=default']))).toBeNull();
  });
});

describe('decisions and headers', () => {
  const admin = { limit: 100, window_seconds: 60 };
  const perLicense = { limit: 60, window_seconds: 3600 };

  it('reports the budget with the fewest requests left when allowed', () => {
    const decision = decisionOf(
      true,
      [admin, perLicense],
      [
        { remaining: 99, resetMicros: 600_000, retryMicros: 0 },
        { remaining: 3, resetMicros: 3_420_000_001, retryMicros: 0 },
      ],
    );
    expect(decision).toEqual({
      allowed: true,
      limit: perLicense,
      state: { remaining: 3, resetSeconds: 3421, retryAfterSeconds: 0 },
    });
    expect(rateLimitHeaders(decision)).toEqual({
      'ratelimit-policy': '60;w=3600',
      ratelimit: 'limit=60, remaining=3, reset=3421',
    });
  });

  it('reports the budget with the longest wait when refused, with Retry-After in whole seconds (at least 1)', () => {
    const decision = decisionOf(
      false,
      [admin, perLicense],
      [
        { remaining: 0, resetMicros: 60_000_000, retryMicros: 200_000 },
        { remaining: 5, resetMicros: 100, retryMicros: 0 },
      ],
    );
    expect(rateLimitHeaders(decision)).toEqual({
      'ratelimit-policy': '100;w=60',
      ratelimit: 'limit=100, remaining=0, reset=60',
      'retry-after': '1',
    });
  });

  it('states only the policy when the state is unknown (Redis unreachable)', () => {
    expect(rateLimitHeaders({ allowed: true, limit: admin })).toEqual({ 'ratelimit-policy': '100;w=60' });
  });
});

describe('licenseOf', () => {
  it('keys an activation by the license id or serial its body names', () => {
    expect(licenseOf({ license_id: '6F0C0000-0000-4000-8000-000000000000', fingerprint: 'm' })).toBe(
      'id:6f0c0000-0000-4000-8000-000000000000',
    );
    expect(licenseOf({ license_key: 'LIC-APP-0000000000000000' })).toBe('serial:LIC-APP-0000000000000000');
    expect(licenseOf({ license_id: 42 })).toBeUndefined();
    expect(licenseOf(undefined)).toBeUndefined();
    expect(licenseOf('text')).toBeUndefined();
  });
});
