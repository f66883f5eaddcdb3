import 'reflect-metadata';
import { startTracing } from '@licensing/shared/tracing';
import { loadRevocationServiceConfig } from './config';
import { startRevocationService } from './app';

// First: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md, "Traces").
startTracing({ service: 'revocation-service' });

startRevocationService(loadRevocationServiceConfig()).catch((error: unknown) => {
  process.stderr.write(
    `revocation-service failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
