import { DynamicModule, Global, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { flushTracing } from '@licensing/shared/tracing';
import { BusClient, BusClientOptions } from './bus-client';
import { HealthController } from './health.controller';
import { Readiness } from './readiness';

/** Sends the spans still buffered before the process exits (nothing to send while tracing is off). */
@Injectable()
export class TraceFlush implements OnApplicationShutdown {
  onApplicationShutdown(): Promise<void> {
    return flushTracing();
  }
}

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
        TraceFlush,
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
