import 'reflect-metadata';
import { loadGatewayConfig } from './config';
import { startGateway } from './app';

startGateway(loadGatewayConfig()).catch((error: unknown) => {
  process.stderr.write(`gateway failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
