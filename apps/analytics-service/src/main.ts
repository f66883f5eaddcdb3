import 'reflect-metadata';
import { loadAnalyticsServiceConfig } from './config';
import { startAnalyticsService } from './app';

startAnalyticsService(loadAnalyticsServiceConfig()).catch((error: unknown) => {
  process.stderr.write(
    `analytics-service failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
