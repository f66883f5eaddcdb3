// The DataSource the TypeORM CLI uses to generate and run this service's migrations.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from '@licensing/shared/database';
import { PRODUCT_ENTITIES, PRODUCT_SCHEMA } from './app.module';
import { loadProductServiceConfig } from './config';
import { PRODUCT_MIGRATIONS } from './migrations';

const config = loadProductServiceConfig();

export const schema = PRODUCT_SCHEMA;
export default new DataSource(
  serviceDataSourceOptions({
    url: config.DATABASE_URL,
    schema: PRODUCT_SCHEMA,
    entities: PRODUCT_ENTITIES,
    migrations: PRODUCT_MIGRATIONS,
  }),
);
