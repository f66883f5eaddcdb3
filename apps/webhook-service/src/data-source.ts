// The DataSource the TypeORM CLI uses to generate and run this service's migrations.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from '@licensing/shared/database';
import { WEBHOOK_ENTITIES, WEBHOOK_SCHEMA } from './app.module';
import { loadWebhookServiceConfig } from './config';
import { WEBHOOK_MIGRATIONS } from './migrations';

const config = loadWebhookServiceConfig();

export const schema = WEBHOOK_SCHEMA;
export default new DataSource(
  serviceDataSourceOptions({
    url: config.DATABASE_URL,
    schema: WEBHOOK_SCHEMA,
    entities: WEBHOOK_ENTITIES,
    migrations: WEBHOOK_MIGRATIONS,
  }),
);
