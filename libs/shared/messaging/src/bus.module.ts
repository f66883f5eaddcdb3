import { DynamicModule, Global, Module } from '@nestjs/common';
import { BusClient, BusClientOptions } from './bus-client';

/** Provides the one BusClient of a process, connected before the app starts serving. */
@Global()
@Module({})
export class BusModule {
  static forRoot(options: BusClientOptions): DynamicModule {
    return {
      module: BusModule,
      providers: [
        {
          provide: BusClient,
          useFactory: async () => {
            const client = new BusClient(options);
            await client.connect();
            return client;
          },
        },
      ],
      exports: [BusClient],
    };
  }
}
