import { DynamicModule, Global, Module } from '@nestjs/common';
import { Readiness } from '@licensing/shared/messaging';
import { SerialStatusCache, SerialStatusCacheOptions } from './serial-status.cache';

/** The one Redis connection of the process, shared by the request handlers and the events consumer. */
@Global()
@Module({})
export class CacheModule {
  constructor(readiness: Readiness, cache: SerialStatusCache) {
    readiness.add({ name: 'redis', kind: 'degradable', isUp: () => cache.isConnected });
  }

  static forRoot(options: SerialStatusCacheOptions): DynamicModule {
    return {
      module: CacheModule,
      providers: [{ provide: SerialStatusCache, useFactory: () => new SerialStatusCache(options) }],
      exports: [SerialStatusCache],
    };
  }
}
