import 'reflect-metadata';
import { startTracing } from '@licensing/shared/tracing';
import { loadProductServiceConfig } from './config';
import { startProductService } from './app';

// First: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md, "Traces").
startTracing({ service: 'product-service' });

startProductService(loadProductServiceConfig()).catch((error: unknown) => {
  process.stderr.write(
    `product-service failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
