import { randomBytes } from 'node:crypto';
import infrastructure from './infrastructure.json';

/**
 * Where the machine's PostgreSQL, NATS and Redis are: the one place tests (and
 * tools/jest-global-setup.js, from infrastructure.json) read it. Each can be pointed elsewhere
 * with TEST_POSTGRES_URL (a server, without a database name), TEST_NATS_URL or TEST_REDIS_URL.
 */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL || infrastructure.postgres;
export const TEST_NATS_URL = process.env.TEST_NATS_URL || infrastructure.nats;
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || infrastructure.redis;

/** The server's maintenance database, to create and drop test databases from. */
export const TEST_ADMIN_DATABASE_URL = `${TEST_POSTGRES_URL}/postgres`;

/** A database of that server by name. */
export const testDatabaseUrl = (name: string): string => `${TEST_POSTGRES_URL}/${name}`;

/**
 * Tests run against the machine's real PostgreSQL, Redis and NATS, next to a running `npm start`
 * stack without touching it, and next to each other: every test file has a database of its own
 * (jest gives each file its own module registry, so this module is evaluated once per file), and
 * every service stack a bus namespace of its own (NATS subjects, JetStream streams, Redis keys).
 * Without the per-file database, one file's outbox relay and sweepers would publish another
 * file's events into the wrong namespace.
 */
export function uniqueNamespace(prefix = 't'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/**
 * `licensing_test_<creation time, base-36 ms>_<random>`: tools/jest-global-setup.js removes the
 * leftovers of killed runs by that prefix once they are an hour old, never a concurrent run's.
 */
export const TEST_DATABASE_NAME = `licensing_test_${Date.now().toString(36)}_${uniqueNamespace('f')}`;
export const TEST_DATABASE_URL = testDatabaseUrl(TEST_DATABASE_NAME);

/**
 * The environment a service under test is configured from: this file's database, the test
 * infrastructure, no fixed ports, quiet logs.
 */
export function testEnv(namespace: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATABASE_URL: TEST_DATABASE_URL,
    NATS_URL: TEST_NATS_URL,
    REDIS_URL: TEST_REDIS_URL,
    DATABASE_POOL_SIZE: '5',
    BUS_NAMESPACE: namespace,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    HEALTH_PORT: '0',
    BOOTSTRAP_DEFAULT_ORG: 'false',
    // A test's stack has nothing in flight when it closes; the production grace would only slow it.
    SHUTDOWN_GRACE_MS: '50',
    // Nor has it a load balancer to wait for.
    READINESS_DRAIN_MS: '0',
    // `npm run test:e2e:direct-routes-off`: the end-to-end suite with the gateway's direct routes off.
    ...(process.env.TEST_DIRECT_ROUTES !== undefined && { DIRECT_ROUTES: process.env.TEST_DIRECT_ROUTES }),
    ...overrides,
  };
}
