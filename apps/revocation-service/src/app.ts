import { INestApplication } from '@nestjs/common';
import { Streams } from '@licensing/contracts';
import { createLogger } from '@licensing/shared/logging';
import { BusClient, ensureStream, startBusService } from '@licensing/shared/messaging';
import { RevocationServiceModule } from './app.module';
import { RevocationServiceConfig } from './config';

/**
 * Starts the revocation service: check-revocation and sync intake. The stream that sync reports
 * go to exists before the first report is taken, so a report is never published into nothing.
 */
export async function startRevocationService(config: RevocationServiceConfig): Promise<INestApplication> {
  return startBusService(RevocationServiceModule.forRoot(config), {
    queue: 'revocation-service',
    natsUrl: config.NATS_URL,
    namespace: config.BUS_NAMESPACE,
    host: config.HOST,
    healthPort: config.HEALTH_PORT,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    logger: createLogger('revocation-service', config.LOG_LEVEL),
    beforeListen: async (app) => {
      const bus = app.get(BusClient);
      await ensureStream(bus.connection(), bus.namespace, Streams.syncReports);
    },
  });
}
