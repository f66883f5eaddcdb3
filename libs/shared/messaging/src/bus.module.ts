import { DynamicModule, Global, Module } from '@nestjs/common';
import { BusClient, BusClientOptions } from './bus-client';
import { HealthController } from './health.controller';
import { Readiness } from './readiness';

/**
 * Provides the one BusClient of a process, connected before the app starts serving, and the
 * process's health probes (`/health/live`, `/health/ready`) with the `Readiness` they answer from.
 */
@Global()
@Module({})
export class BusModule {
  static forRoot(options: BusClientOptions): DynamicModule {
    return {
      module: BusModule,
      controllers: [HealthController],
      providers: [
        Readiness,
        {
          provide: BusClient,
          useFactory: async () => {
            const client = new BusClient(options);
            await client.connect();
            return client;
          },
        },
      ],
      exports: [BusClient, Readiness],
    };
  }
}
