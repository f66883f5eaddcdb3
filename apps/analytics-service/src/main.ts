import 'reflect-metadata';
import { startTracing } from '@licensing/shared/tracing';
import { loadAnalyticsServiceConfig } from './config';
import { startAnalyticsService } from './app';

// First: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md, "Traces").
startTracing({ service: 'analytics-service' });

startAnalyticsService(loadAnalyticsServiceConfig()).catch((error: unknown) => {
  process.stderr.write(
    `analytics-service failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
