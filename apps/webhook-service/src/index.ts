// What other projects may use of this service: starting it in-process (the end-to-end tests do).
// Production starts it through main.ts.
export { startWebhookService } from './app';
export { loadWebhookServiceConfig } from './config';
