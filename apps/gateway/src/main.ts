import 'reflect-metadata';
import { startTracing } from '@licensing/shared/tracing';
import { loadGatewayConfig } from './config';
import { startGateway } from './edge/app';

// First: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md, "Traces").
startTracing({ service: 'gateway' });

startGateway(loadGatewayConfig()).catch((error: unknown) => {
  process.stderr.write(`gateway failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
