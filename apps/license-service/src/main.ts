import 'reflect-metadata';
import { loadLicenseServiceConfig } from './config';
import { startLicenseService } from './app';

startLicenseService(loadLicenseServiceConfig()).catch((error: unknown) => {
  process.stderr.write(
    `license-service failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
