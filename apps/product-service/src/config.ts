import { ConfigOf, commonEnv, databaseEnv, healthEnv, loadConfig } from '@licensing/shared/config';

export const productServiceEnv = {
  ...commonEnv,
  ...databaseEnv,
  ...healthEnv(3101),
};

export type ProductServiceConfig = ConfigOf<typeof productServiceEnv>;

export const loadProductServiceConfig = (source?: Record<string, string | undefined>): ProductServiceConfig =>
  loadConfig(productServiceEnv, source);
