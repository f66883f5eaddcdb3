import 'reflect-metadata';
import { loadWebhookServiceConfig } from './config';
import { startWebhookService } from './app';

startWebhookService(loadWebhookServiceConfig()).catch((error: unknown) => {
  process.stderr.write(
    `webhook-service failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
