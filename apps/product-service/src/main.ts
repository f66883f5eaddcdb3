import 'reflect-metadata';
import { loadProductServiceConfig } from './config';
import { startProductService } from './app';

startProductService(loadProductServiceConfig()).catch((error: unknown) => {
  process.stderr.write(
    `product-service failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
