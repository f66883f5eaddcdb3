import { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ensureDatabase, migrate } from '@licensing/shared/database';
import { startBusService } from '@licensing/shared/messaging';
import { WEBHOOK_SCHEMA, WebhookServiceModule } from './app.module';
import { WebhookServiceConfig } from './config';
import { DeliveryWorker } from './deliveries/delivery.worker';
import { EventFanoutConsumer } from './deliveries/event-fanout.consumer';

/**
 * Starts the webhook service: migrates its schema, then fans every event of the stream out to the
 * matching endpoints, delivers them, and takes `webhook.*` requests.
 */
export async function startWebhookService(config: WebhookServiceConfig): Promise<INestApplication> {
  if (config.DATABASE_AUTO_CREATE) await ensureDatabase(config.DATABASE_URL);
  return startBusService(WebhookServiceModule.forRoot(config), {
    name: 'webhook-service',
    config,
    beforeInit: (app) => migrate(app.get(DataSource), WEBHOOK_SCHEMA),
    beforeListen: async (app) => {
      app.get(DeliveryWorker).start();
      await app.get(EventFanoutConsumer).start();
    },
  });
}
