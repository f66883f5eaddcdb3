// What other projects may use of this service: starting it in-process (the end-to-end tests do).
// Production starts it through main.ts.
export { startWebhookService } from './app';
export { loadWebhookServiceConfig } from './config';
// Its schema and migrations: the tests migrate a template database once and copy it per file.
export { WEBHOOK_SCHEMA } from './app.module';
export { WEBHOOK_MIGRATIONS } from './migrations';
