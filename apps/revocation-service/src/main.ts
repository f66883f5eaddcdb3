import 'reflect-metadata';
import { loadRevocationServiceConfig } from './config';
import { startRevocationService } from './app';

startRevocationService(loadRevocationServiceConfig()).catch((error: unknown) => {
  process.stderr.write(
    `revocation-service failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
