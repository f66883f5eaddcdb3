// What other projects may use of this service: starting it in-process (the end-to-end tests do).
// Production starts it through main.ts.
export { startAnalyticsService } from './app';
export { loadAnalyticsServiceConfig } from './config';
export { PartitionsService } from './partitions/partitions.service';
// Its schema and migrations: the tests migrate a template database once and copy it per file.
export { ANALYTICS_SCHEMA } from './app.module';
export { ANALYTICS_MIGRATIONS } from './migrations';
