import 'reflect-metadata';
import { startTracing } from '@licensing/shared/tracing';
import { loadLicenseServiceConfig } from './config';
import { startLicenseService } from './app';

// First: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md, "Traces").
startTracing({ service: 'license-service' });

startLicenseService(loadLicenseServiceConfig()).catch((error: unknown) => {
  process.stderr.write(
    `license-service failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
