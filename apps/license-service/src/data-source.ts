// The DataSource the TypeORM CLI uses to generate and run this service's migrations.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from '@licensing/shared/database';
import { LICENSE_ENTITIES, LICENSE_SCHEMA } from './app.module';
import { loadLicenseServiceConfig } from './config';
import { LICENSE_MIGRATIONS } from './migrations';

const config = loadLicenseServiceConfig();

export const schema = LICENSE_SCHEMA;
export default new DataSource(
  serviceDataSourceOptions({
    url: config.DATABASE_URL,
    schema: LICENSE_SCHEMA,
    entities: LICENSE_ENTITIES,
    migrations: LICENSE_MIGRATIONS,
  }),
);
