// What other projects may use of this service: starting it in-process (the end-to-end tests do).
// Production starts it through main.ts.
export { startLicenseService } from './app';
export { loadLicenseServiceConfig } from './config';
// Its schema and migrations: the tests migrate a template database once and copy it per file.
export { LICENSE_SCHEMA } from './app.module';
export { LICENSE_MIGRATIONS } from './migrations';
