// What other projects may use of this service: starting it in-process (the end-to-end tests do).
// Production starts it through main.ts.
export { startProductService } from './app';
export { loadProductServiceConfig } from './config';
// Its schema and migrations: the tests migrate a template database once and copy it per file.
export { PRODUCT_SCHEMA } from './app.module';
export { PRODUCT_MIGRATIONS } from './migrations';
