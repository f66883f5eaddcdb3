import { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ensureDatabase, migrate } from '@licensing/shared/database';
import { startBusService } from '@licensing/shared/messaging';
import { LICENSE_SCHEMA, LicenseServiceModule } from './app.module';
import { ProductEventsConsumer } from './catalog/product-events.consumer';
import { LicenseServiceConfig } from './config';
import { LicenseEventReplay } from './restore/license-event-replay';

/**
 * Starts the license service: migrates its schema, replays the license events a restored database
 * missed, follows the product events into its catalog, then takes license, key pair and catalog
 * requests.
 */
export async function startLicenseService(config: LicenseServiceConfig): Promise<INestApplication> {
  if (config.DATABASE_AUTO_CREATE) await ensureDatabase(config.DATABASE_URL);
  return startBusService(LicenseServiceModule.forRoot(config), {
    name: 'license-service',
    config,
    beforeInit: (app) => migrate(app.get(DataSource), LICENSE_SCHEMA),
    beforeListen: async (app) => {
      await app.get(LicenseEventReplay).run();
      await app.get(ProductEventsConsumer).start();
    },
  });
}
