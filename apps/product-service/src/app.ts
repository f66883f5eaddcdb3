import { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ensureDatabase, migrate } from '@licensing/shared/database';
import { startBusService } from '@licensing/shared/messaging';
import { ProductServiceModule, PRODUCT_SCHEMA } from './app.module';
import { ProductServiceConfig } from './config';

/** Starts the product service: migrates its schema, then takes `product.*` requests. */
export async function startProductService(config: ProductServiceConfig): Promise<INestApplication> {
  if (config.DATABASE_AUTO_CREATE) await ensureDatabase(config.DATABASE_URL);
  return startBusService(ProductServiceModule.forRoot(config), {
    name: 'product-service',
    config,
    beforeInit: (app) => migrate(app.get(DataSource), PRODUCT_SCHEMA),
  });
}
