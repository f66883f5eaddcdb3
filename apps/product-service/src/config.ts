import { ConfigOf, commonEnv, databaseEnv, env, loadConfig } from '@licensing/shared/config';

export const productServiceEnv = {
  ...commonEnv,
  ...databaseEnv,
  HOST: env.string({
    default: '127.0.0.1',
    production: '0.0.0.0',
    description: 'Interface for the health endpoints',
  }),
  HEALTH_PORT: env.int({ default: 3101, min: 0, max: 65535, description: 'Port of /healthz and /readyz' }),
};

export type ProductServiceConfig = ConfigOf<typeof productServiceEnv>;

export const loadProductServiceConfig = (source?: Record<string, string | undefined>): ProductServiceConfig =>
  loadConfig(productServiceEnv, source);
