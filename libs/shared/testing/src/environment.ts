import { randomBytes } from 'node:crypto';

/**
 * Tests run against the machine's real PostgreSQL, Redis and NATS, next to a running `npm start`
 * stack without touching it: their own database, and a bus namespace of their own per test file.
 */
export const TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/licensing_test';

export function uniqueNamespace(prefix = 't'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** The environment a service under test is configured from: no fixed ports, quiet logs. */
export function testEnv(namespace: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATABASE_URL: TEST_DATABASE_URL,
    BUS_NAMESPACE: namespace,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    HEALTH_PORT: '0',
    BOOTSTRAP_DEFAULT_ORG: 'false',
    ...overrides,
  };
}
