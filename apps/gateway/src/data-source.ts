// The DataSource the TypeORM CLI uses to generate and run this service's migrations.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from '@licensing/shared/database';
import { GATEWAY_ENTITIES, GATEWAY_SCHEMA } from './edge/app.module';
import { loadGatewayConfig } from './config';
import { GATEWAY_MIGRATIONS } from './migrations';

const config = loadGatewayConfig();

export const schema = GATEWAY_SCHEMA;
export default new DataSource(
  serviceDataSourceOptions({
    url: config.DATABASE_URL,
    schema: GATEWAY_SCHEMA,
    entities: GATEWAY_ENTITIES,
    migrations: GATEWAY_MIGRATIONS,
  }),
);
