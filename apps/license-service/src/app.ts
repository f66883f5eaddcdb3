import { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ensureDatabase, migrate } from '@licensing/shared/database';
import { createLogger } from '@licensing/shared/logging';
import { startBusService } from '@licensing/shared/messaging';
import { LICENSE_SCHEMA, LicenseServiceModule } from './app.module';
import { LicenseServiceConfig } from './config';

/** Starts the license service: migrates its schema, then takes license, key pair and catalog requests. */
export async function startLicenseService(config: LicenseServiceConfig): Promise<INestApplication> {
  if (config.DATABASE_AUTO_CREATE) await ensureDatabase(config.DATABASE_URL);
  return startBusService(LicenseServiceModule.forRoot(config), {
    queue: 'license-service',
    natsUrl: config.NATS_URL,
    namespace: config.BUS_NAMESPACE,
    host: config.HOST,
    healthPort: config.HEALTH_PORT,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    logger: createLogger('license-service', config.LOG_LEVEL),
    beforeInit: (app) => migrate(app.get(DataSource), LICENSE_SCHEMA),
  });
}
