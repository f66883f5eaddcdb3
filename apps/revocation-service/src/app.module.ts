import { DynamicModule, Module } from '@nestjs/common';
import { redisConnection } from '@licensing/shared/config';
import { BusModule } from '@licensing/shared/messaging';
import { SerialCacheModule } from '@licensing/shared/serial-cache';
import { RevocationServiceConfig } from './config';
import { RevocationModule } from './revocation/revocation.module';

@Module({})
export class RevocationServiceModule {
  static forRoot(config: RevocationServiceConfig): DynamicModule {
    return {
      module: RevocationServiceModule,
      imports: [
        BusModule.forRoot({
          natsUrl: config.NATS_URL,
          clusterSize: config.NATS_CLUSTER_SIZE,
          namespace: config.BUS_NAMESPACE,
          timeoutMs: config.BUS_TIMEOUT_MS,
          streamReplicas: config.JETSTREAM_REPLICAS,
          name: 'revocation-service',
        }),
        SerialCacheModule.forWriter({
          connection: redisConnection(config),
          namespace: config.BUS_NAMESPACE,
          ttlSeconds: config.REVOCATION_CACHE_TTL_SECONDS,
          negativeTtlSeconds: config.REVOCATION_NEGATIVE_TTL_SECONDS,
        }),
        RevocationModule,
      ],
    };
  }
}
