import { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ensureDatabase, migrate } from '@licensing/shared/database';
import { createLogger } from '@licensing/shared/logging';
import { startBusService } from '@licensing/shared/messaging';
import { ProductServiceModule, PRODUCT_SCHEMA } from './app.module';
import { ProductServiceConfig } from './config';

/** Starts the product service: migrates its schema, then takes `product.*` requests. */
export async function startProductService(config: ProductServiceConfig): Promise<INestApplication> {
  if (config.DATABASE_AUTO_CREATE) await ensureDatabase(config.DATABASE_URL);
  return startBusService(ProductServiceModule.forRoot(config), {
    queue: 'product-service',
    natsUrl: config.NATS_URL,
    namespace: config.BUS_NAMESPACE,
    host: config.HOST,
    healthPort: config.HEALTH_PORT,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    logger: createLogger('product-service', config.LOG_LEVEL),
    beforeInit: (app) => migrate(app.get(DataSource), PRODUCT_SCHEMA),
  });
}
