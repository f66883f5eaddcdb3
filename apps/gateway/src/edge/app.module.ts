import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { createValidationPipe } from '@licensing/shared/errors';
import { DatabaseModule } from '@licensing/shared/database';
import { BusModule } from '@licensing/shared/messaging';
import { ActivationsController } from '../routes/activations.controller';
import { ApiKeysController } from '../routes/api-keys.controller';
import { AuditEventsController } from '../routes/audit-events.controller';
import { LicenseTokensController, OrganizationController } from '../routes/credentials.controller';
import { RelaysController } from '../routes/relays.controller';
import { ResponseKeysController } from '../routes/response-keys.controller';
import { AnalyticsController, LicenseUsageController } from '../routes/analytics.controller';
import { AuditEventEntity } from '../audit/audit-event.entity';
import { AuditModule } from '../audit/audit.module';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { ProblemFilter } from './problem.filter';
import { RequestContextInterceptor } from './request-context.interceptor';
import { IdempotencyKeyEntity } from '../idempotency/idempotency-key.entity';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { ApiKeyEntity } from '../identity/api-key.entity';
import { IdentityModule } from '../identity/identity.module';
import { OrganizationEntity } from '../identity/organization.entity';
import { EntitlementsController, LicenseEntitlementsController } from '../routes/entitlements.controller';
import { KeyPairsController } from '../routes/key-pairs.controller';
import { LicensesController } from '../routes/licenses.controller';
import { GATEWAY_MIGRATIONS } from '../migrations';
import { ProductsController } from '../routes/products.controller';
import { PoliciesController } from '../routes/policies.controller';
import { LicenseEventHub } from '../push/license-event-hub';
import { LicenseEventsController } from '../routes/license-events.controller';
import { RateLimitsModule } from '../rate-limits/rate-limits.module';
import { RevocationController } from '../routes/revocation.controller';
import { RevocationListsController } from '../routes/revocation-lists.controller';
import { ResponseKeyEntity } from '../signed-answers/response-key.entity';
import { SignedAnswersModule } from '../signed-answers/signed-answers.module';
import { WebhookDeliveriesController, WebhooksController } from '../routes/webhooks.controller';

export const GATEWAY_SCHEMA = 'identity';
export const GATEWAY_ENTITIES = [
  OrganizationEntity,
  ApiKeyEntity,
  IdempotencyKeyEntity,
  AuditEventEntity,
  ResponseKeyEntity,
];

@Module({})
export class GatewayModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: GatewayModule,
      global: true,
      imports: [
        DatabaseModule.forRoot({
          url: config.DATABASE_URL,
          schema: GATEWAY_SCHEMA,
          entities: GATEWAY_ENTITIES,
          migrations: GATEWAY_MIGRATIONS,
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
          name: 'gateway',
        }),
        AuditModule,
        IdentityModule,
        IdempotencyModule,
        RateLimitsModule,
        SignedAnswersModule,
      ],
      controllers: [
        ProductsController,
        PoliciesController,
        LicensesController,
        KeyPairsController,
        EntitlementsController,
        LicenseEntitlementsController,
        RevocationController,
        RevocationListsController,
        LicenseEventsController,
        ActivationsController,
        AnalyticsController,
        LicenseUsageController,
        WebhooksController,
        WebhookDeliveriesController,
        ApiKeysController,
        LicenseTokensController,
        OrganizationController,
        ResponseKeysController,
        AuditEventsController,
        RelaysController,
      ],
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        LicenseEventHub,
        { provide: APP_PIPE, useFactory: createValidationPipe },
        { provide: APP_FILTER, useClass: ProblemFilter },
        { provide: APP_INTERCEPTOR, useClass: RequestContextInterceptor },
      ],
      exports: [GATEWAY_CONFIG],
    };
  }
}
