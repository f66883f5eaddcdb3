import { DynamicModule, Global, Module } from '@nestjs/common';
import { Readiness } from '@licensing/shared/messaging';
import { SerialStatusCache, SerialStatusCacheOptions } from './serial-status.cache';

/**
 * The process's one connection to the serial-status cache. The revocation service answers
 * check-revocation and sync from it; the license service reads it on verify and fills its misses.
 * Neither depends on it to be correct, so it is a degradable readiness check.
 */
@Global()
@Module({})
export class SerialCacheModule {
  constructor(readiness: Readiness, cache: SerialStatusCache) {
    readiness.add({ name: 'redis', kind: 'degradable', isUp: () => cache.isConnected });
  }

  static forRoot(options: SerialStatusCacheOptions): DynamicModule {
    return {
      module: SerialCacheModule,
      providers: [{ provide: SerialStatusCache, useFactory: () => new SerialStatusCache(options) }],
      exports: [SerialStatusCache],
    };
  }
}
