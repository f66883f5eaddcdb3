import { DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule } from '@licensing/shared/database';
import { CatalogProductEntity } from './catalog/catalog-product.entity';
import { CatalogModule } from './catalog/catalog.module';
import { LicenseServiceConfig } from './config';
import { KeyPairEntity } from './key-pairs/key-pair.entity';
import { KeyPairsModule } from './key-pairs/key-pairs.module';
import { LicenseEntity } from './licenses/license.entity';
import { LicensesModule } from './licenses/licenses.module';
import { LICENSE_MIGRATIONS } from './migrations';
import { SigningModule } from './signing/signing.module';

export const LICENSE_SCHEMA = 'license';
export const LICENSE_ENTITIES = [KeyPairEntity, CatalogProductEntity, LicenseEntity];

@Module({})
export class LicenseServiceModule {
  static forRoot(config: LicenseServiceConfig): DynamicModule {
    return {
      module: LicenseServiceModule,
      imports: [
        DatabaseModule.forRoot({
          url: config.DATABASE_URL,
          schema: LICENSE_SCHEMA,
          entities: LICENSE_ENTITIES,
          migrations: LICENSE_MIGRATIONS,
          poolSize: config.DATABASE_POOL_SIZE,
        }),
        SigningModule.forRoot(config.SIGNING_MASTER_KEYS),
        CatalogModule,
        KeyPairsModule,
        LicensesModule,
      ],
    };
  }
}
