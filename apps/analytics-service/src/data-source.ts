// The DataSource the TypeORM CLI uses to generate and run this service's migrations.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from '@licensing/shared/database';
import { ANALYTICS_ENTITIES, ANALYTICS_SCHEMA } from './app.module';
import { loadAnalyticsServiceConfig } from './config';
import { ANALYTICS_MIGRATIONS } from './migrations';

const config = loadAnalyticsServiceConfig();

export const schema = ANALYTICS_SCHEMA;
export default new DataSource(
  serviceDataSourceOptions({
    url: config.DATABASE_URL,
    schema: ANALYTICS_SCHEMA,
    entities: ANALYTICS_ENTITIES,
    migrations: ANALYTICS_MIGRATIONS,
  }),
);
