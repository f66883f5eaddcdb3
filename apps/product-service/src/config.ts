import { ConfigOf, commonEnv, databaseEnv, env, healthEnv, loadConfig } from '@licensing/shared/config';

const productServiceEnv = {
  ...commonEnv,
  ...databaseEnv,
  ...healthEnv(3101),
  PRODUCT_DELETION_SWEEP_MS: env.int({
    default: 30_000,
    min: 50,
    description: 'How often deletions that were started and never answered are finished or undone',
  }),
};

export type ProductServiceConfig = ConfigOf<typeof productServiceEnv>;
export const PRODUCT_SERVICE_CONFIG = Symbol('ProductServiceConfig');

export const loadProductServiceConfig = (source?: Record<string, string | undefined>): ProductServiceConfig =>
  loadConfig(productServiceEnv, source);
