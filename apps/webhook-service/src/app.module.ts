import { DynamicModule, Module } from '@nestjs/common';
import { MasterKeyVault } from '@licensing/shared/crypto';
import { DatabaseModule } from '@licensing/shared/database';
import { EventsModule, OutboxEventEntity } from '@licensing/shared/events';
import { BusModule } from '@licensing/shared/messaging';
import { WEBHOOK_CONFIG, WebhookServiceConfig } from './config';
import { DeliveriesModule } from './deliveries/deliveries.module';
import { DeliveryEntity } from './deliveries/delivery.entity';
import { WebhookEventEntity } from './deliveries/webhook-event.entity';
import { EndpointEntity } from './endpoints/endpoint.entity';
import { EndpointsModule } from './endpoints/endpoints.module';
import { WEBHOOK_MIGRATIONS } from './migrations';

export const WEBHOOK_SCHEMA = 'webhook';
export const WEBHOOK_ENTITIES = [EndpointEntity, WebhookEventEntity, DeliveryEntity, OutboxEventEntity];

@Module({})
export class WebhookServiceModule {
  static forRoot(config: WebhookServiceConfig): DynamicModule {
    return {
      module: WebhookServiceModule,
      global: true,
      imports: [
        DatabaseModule.forRoot({
          url: config.DATABASE_URL,
          schema: WEBHOOK_SCHEMA,
          entities: WEBHOOK_ENTITIES,
          migrations: WEBHOOK_MIGRATIONS,
          poolSize: config.DATABASE_POOL_SIZE,
          connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
          queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
        }),
        BusModule.forRoot({
          natsUrl: config.NATS_URL,
          clusterSize: config.NATS_CLUSTER_SIZE,
          namespace: config.BUS_NAMESPACE,
          timeoutMs: config.BUS_TIMEOUT_MS,
          streamReplicas: config.JETSTREAM_REPLICAS,
          name: 'webhook-service',
        }),
        EventsModule,
        DeliveriesModule,
        EndpointsModule,
      ],
      providers: [
        { provide: WEBHOOK_CONFIG, useValue: config },
        {
          provide: MasterKeyVault,
          useValue: new MasterKeyVault(config.WEBHOOK_MASTER_KEYS, 'WEBHOOK_MASTER_KEYS'),
        },
      ],
      exports: [WEBHOOK_CONFIG, MasterKeyVault],
    };
  }
}
