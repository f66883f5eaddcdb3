import { ConfigOf, commonEnv, env, healthEnv, loadConfig, redisEnv } from '@licensing/shared/config';

/** No database: the service answers from Redis and, on a miss or an outage, from the license service. */
export const revocationServiceEnv = {
  ...commonEnv,
  ...redisEnv('Redis of the serial-status cache'),
  ...healthEnv(3103),
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
