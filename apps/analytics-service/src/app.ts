import { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ensureDatabase, migrate } from '@licensing/shared/database';
import { startBusService } from '@licensing/shared/messaging';
import { ANALYTICS_SCHEMA, AnalyticsServiceModule } from './app.module';
import { AnalyticsServiceConfig } from './config';
import { PartitionMaintenanceJob } from './partitions/partitions.service';
import { SyncReportConsumer } from './reports/sync-report.consumer';
import { UsageEventConsumer } from './usage/usage-event.consumer';

/**
 * Starts the analytics service: migrates its schema, then consumes the sync-report stream and the
 * usage-increment events, and takes `analytics.*` queries.
 */
export async function startAnalyticsService(config: AnalyticsServiceConfig): Promise<INestApplication> {
  if (config.DATABASE_AUTO_CREATE) await ensureDatabase(config.DATABASE_URL);
  return startBusService(AnalyticsServiceModule.forRoot(config), {
    name: 'analytics-service',
    config,
    beforeInit: (app) => migrate(app.get(DataSource), ANALYTICS_SCHEMA),
    beforeListen: async (app) => {
      await app.get(PartitionMaintenanceJob).prepare();
      await app.get(SyncReportConsumer).start();
      await app.get(UsageEventConsumer).start();
    },
  });
}
