import { INestApplication } from '@nestjs/common';
import { Streams } from '@licensing/contracts';
import { BusClient, ensureStream, startBusService } from '@licensing/shared/messaging';
import { RevocationServiceModule } from './app.module';
import { RevocationServiceConfig } from './config';

/**
 * Starts the revocation service: check-revocation and sync intake. The stream that sync reports
 * go to exists before the first report is taken, so a report is never published into nothing.
 */
export async function startRevocationService(config: RevocationServiceConfig): Promise<INestApplication> {
  return startBusService(RevocationServiceModule.forRoot(config), {
    name: 'revocation-service',
    config,
    beforeListen: async (app) => {
      const bus = app.get(BusClient);
      await ensureStream(bus.connection(), bus.namespace, Streams.syncReports, bus.streamReplicas);
    },
  });
}
