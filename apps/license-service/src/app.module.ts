import { DynamicModule, Module } from '@nestjs/common';
import { redisConnection } from '@licensing/shared/config';
import { DatabaseModule } from '@licensing/shared/database';
import { EventsModule, OutboxEventEntity } from '@licensing/shared/events';
import { BusModule } from '@licensing/shared/messaging';
import { SerialCacheModule } from '@licensing/shared/serial-cache';
import { ActivationGrantEntity } from './activations/activation-grant.entity';
import { ActivationEntity } from './activations/activation.entity';
import { ActivationsModule } from './activations/activations.module';
import { CatalogProductEntity } from './catalog/catalog-product.entity';
import { CatalogModule } from './catalog/catalog.module';
import { LICENSE_SERVICE_CONFIG, LicenseServiceConfig } from './config';
import { CredentialsModule } from './credentials/credentials.module';
import { EntitlementEntity } from './entitlements/entitlement.entity';
import { EntitlementsModule } from './entitlements/entitlements.module';
import { LicenseEntitlementEntity } from './entitlements/license-entitlement.entity';
import { LicenseTokenEntity } from './credentials/license-token.entity';
import { KeyPairEntity } from './key-pairs/key-pair.entity';
import { KeyPairsModule } from './key-pairs/key-pairs.module';
import { LicenseEntity } from './licenses/license.entity';
import { LicensesModule } from './licenses/licenses.module';
import { LICENSE_MIGRATIONS } from './migrations';
import { PolicyEntity } from './policies/policy.entity';
import { PolicyEntitlementEntity } from './policies/policy-entitlement.entity';
import { PoliciesModule } from './policies/policies.module';
import { ProcessEntity } from './activations/process.entity';
import { RelayFileEntity } from './relays/relay-file.entity';
import { RelaysModule } from './relays/relays.module';
import { RestoreModule } from './restore/restore.module';
import { StreamCheckpointEntity } from './restore/stream-checkpoint.entity';
import { RevocationListEntity } from './revocation-lists/revocation-list.entity';
import { RevocationListsModule } from './revocation-lists/revocation-lists.module';
import { SigningModule } from './signing/signing.module';

export const LICENSE_SCHEMA = 'license';
export const LICENSE_ENTITIES = [
  KeyPairEntity,
  CatalogProductEntity,
  LicenseEntity,
  ActivationEntity,
  ActivationGrantEntity,
  PolicyEntity,
  ProcessEntity,
  LicenseTokenEntity,
  EntitlementEntity,
  LicenseEntitlementEntity,
  PolicyEntitlementEntity,
  RevocationListEntity,
  RelayFileEntity,
  StreamCheckpointEntity,
  OutboxEventEntity,
];

@Module({})
export class LicenseServiceModule {
  static forRoot(config: LicenseServiceConfig): DynamicModule {
    return {
      module: LicenseServiceModule,
      global: true,
      providers: [{ provide: LICENSE_SERVICE_CONFIG, useValue: config }],
      exports: [LICENSE_SERVICE_CONFIG],
      imports: [
        DatabaseModule.forRoot({
          url: config.DATABASE_URL,
          schema: LICENSE_SCHEMA,
          entities: LICENSE_ENTITIES,
          migrations: LICENSE_MIGRATIONS,
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
          name: 'license-service',
        }),
        // Verify reads the cache; the revocation service alone writes it (verify's fills go there).
        SerialCacheModule.forReader({ connection: redisConnection(config), namespace: config.BUS_NAMESPACE }),
        EventsModule,
        SigningModule.forRoot(config.SIGNING_MASTER_KEYS),
        CatalogModule,
        KeyPairsModule,
        LicensesModule,
        ActivationsModule,
        PoliciesModule,
        CredentialsModule,
        EntitlementsModule,
        RevocationListsModule,
        RelaysModule,
        RestoreModule,
      ],
    };
  }
}
