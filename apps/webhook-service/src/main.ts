import 'reflect-metadata';
import { startTracing } from '@licensing/shared/tracing';
import { loadWebhookServiceConfig } from './config';
import { startWebhookService } from './app';

// First: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md, "Traces").
startTracing({ service: 'webhook-service' });

startWebhookService(loadWebhookServiceConfig()).catch((error: unknown) => {
  process.stderr.write(
    `webhook-service failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
