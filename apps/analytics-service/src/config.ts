import { ConfigOf, commonEnv, databaseEnv, env, loadConfig } from '@licensing/shared/config';

export const analyticsServiceEnv = {
  ...commonEnv,
  ...databaseEnv,
  HOST: env.string({
    default: '127.0.0.1',
    production: '0.0.0.0',
    description: 'Interface for the health endpoints',
  }),
  HEALTH_PORT: env.int({ default: 3104, min: 0, max: 65535, description: 'Port of /healthz and /readyz' }),
  ANALYTICS_BATCH_SIZE: env.int({
    default: 500,
    min: 1,
    max: 10_000,
    description: 'Most sync reports taken from the stream and written to PostgreSQL in one statement',
  }),
  // nats.js refuses a pull that waits less than a second, hence the floor.
  ANALYTICS_BATCH_WAIT_MS: env.int({
    default: 1000,
    min: 1000,
    max: 30_000,
    description:
      'Longest a fetch from the stream waits for its batch to fill before the reports it has are written',
  }),
};

export type AnalyticsServiceConfig = ConfigOf<typeof analyticsServiceEnv>;

export const loadAnalyticsServiceConfig = (
  source?: Record<string, string | undefined>,
): AnalyticsServiceConfig => loadConfig(analyticsServiceEnv, source);

/** Injection token for the service's typed configuration. */
export const ANALYTICS_CONFIG = Symbol('AnalyticsServiceConfig');
