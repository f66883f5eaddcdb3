import { DynamicModule, Global, Module } from '@nestjs/common';
import { Readiness } from '@licensing/shared/messaging';
import {
  SerialStatusCache,
  SerialStatusCacheOptions,
  SerialStatusReader,
  SerialStatusReaderOptions,
} from './serial-status.cache';

/**
 * The process's one connection to the serial-status cache. The revocation service owns it
 * (`forWriter`): it answers check-revocation and sync from it and is the only one to write it.
 * The license service reads it on verify (`forReader`) and sends its fills to the revocation
 * service. Neither depends on it to be correct, so it is a degradable readiness check.
 */
@Global()
@Module({})
export class SerialCacheModule {
  /** Reads and writes (SerialStatusCache): for the revocation service alone. */
  static forWriter(options: SerialStatusCacheOptions): DynamicModule {
    return provide(SerialStatusCache, () => new SerialStatusCache(options));
  }

  /** Reads only (SerialStatusReader): for any other service. */
  static forReader(options: SerialStatusReaderOptions): DynamicModule {
    return provide(SerialStatusReader, () => new SerialStatusReader(options));
  }
}

function provide<T extends SerialStatusReader>(
  token: abstract new (...args: never[]) => T,
  create: () => T,
): DynamicModule {
  return {
    module: SerialCacheModule,
    providers: [
      {
        provide: token,
        inject: [Readiness],
        useFactory: (readiness: Readiness) => {
          const cache = create();
          readiness.add({ name: 'redis', kind: 'degradable', isUp: () => cache.isConnected });
          return cache;
        },
      },
    ],
    exports: [token],
  };
}
