import {
  ConfigOf,
  commonEnv,
  healthEnv,
  loadConfig,
  redisEnv,
  serialCacheEnv,
} from '@licensing/shared/config';

/** No database: the service answers from Redis and, on a miss or an outage, from the license service. */
const revocationServiceEnv = {
  ...commonEnv,
  ...redisEnv('Redis of the serial-status cache'),
  ...healthEnv(3103),
  ...serialCacheEnv,
};

export type RevocationServiceConfig = ConfigOf<typeof revocationServiceEnv>;

export const loadRevocationServiceConfig = (
  source?: Record<string, string | undefined>,
): RevocationServiceConfig => loadConfig(revocationServiceEnv, source);
