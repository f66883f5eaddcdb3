import { ConfigOf, commonEnv, env, loadConfig } from '@licensing/shared/config';

/** No database: the service answers from Redis and, on a miss or an outage, from the license service. */
export const revocationServiceEnv = {
  ...commonEnv,
  REDIS_URL: env.url({
    protocols: ['redis', 'rediss'],
    default: 'redis://127.0.0.1:6379',
    production: null,
    description: 'Redis of the serial-status cache',
  }),
  HOST: env.string({
    default: '127.0.0.1',
    production: '0.0.0.0',
    description: 'Interface for the health endpoints',
  }),
  HEALTH_PORT: env.int({ default: 3103, min: 0, max: 65535, description: 'Port of /healthz and /readyz' }),
  REVOCATION_CACHE_TTL_SECONDS: env.int({
    default: 3600,
    min: 1,
    description: 'How long a cached serial status lives; events and write-through keep it current meanwhile',
  }),
  REVOCATION_NEGATIVE_TTL_SECONDS: env.int({
    default: 30,
    min: 1,
    description:
      'How long "no such serial" is cached, so unknown serials do not reach PostgreSQL on every check',
  }),
};

export type RevocationServiceConfig = ConfigOf<typeof revocationServiceEnv>;

export const loadRevocationServiceConfig = (
  source?: Record<string, string | undefined>,
): RevocationServiceConfig => loadConfig(revocationServiceEnv, source);
