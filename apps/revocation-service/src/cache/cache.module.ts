import { DynamicModule, Global, Module } from '@nestjs/common';
import { SerialStatusCache, SerialStatusCacheOptions } from './serial-status.cache';

/** The one Redis connection of the process, shared by the request handlers and the events consumer. */
@Global()
@Module({})
export class CacheModule {
  static forRoot(options: SerialStatusCacheOptions): DynamicModule {
    return {
      module: CacheModule,
      providers: [{ provide: SerialStatusCache, useFactory: () => new SerialStatusCache(options) }],
      exports: [SerialStatusCache],
    };
  }
}
