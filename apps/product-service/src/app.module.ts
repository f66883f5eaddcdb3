import { DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule } from '@licensing/shared/database';
import { EventsModule, OutboxEventEntity } from '@licensing/shared/events';
import { BusModule } from '@licensing/shared/messaging';
import { PRODUCT_SERVICE_CONFIG, ProductServiceConfig } from './config';
import { PRODUCT_MIGRATIONS } from './migrations';
import { ProductEntity } from './products/product.entity';
import { ProductsModule } from './products/products.module';

export const PRODUCT_SCHEMA = 'product';
export const PRODUCT_ENTITIES = [ProductEntity, OutboxEventEntity];

@Module({})
export class ProductServiceModule {
  static forRoot(config: ProductServiceConfig): DynamicModule {
    return {
      module: ProductServiceModule,
      global: true,
      providers: [{ provide: PRODUCT_SERVICE_CONFIG, useValue: config }],
      exports: [PRODUCT_SERVICE_CONFIG],
      imports: [
        DatabaseModule.forRoot({
          url: config.DATABASE_URL,
          schema: PRODUCT_SCHEMA,
          entities: PRODUCT_ENTITIES,
          migrations: PRODUCT_MIGRATIONS,
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
          name: 'product-service',
        }),
        EventsModule,
        ProductsModule,
      ],
    };
  }
}
