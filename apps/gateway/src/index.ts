// What other projects may use of the gateway: starting it in-process, creating organizations and
// running operator commands (the end-to-end tests do). Production starts it through main.ts.
export { startGateway } from './edge/app';
export { runCli } from './cli';
export { loadGatewayConfig } from './config';
export { OrganizationsService } from './identity/organizations.service';
export { LicenseEventHub } from './push/license-event-hub';
export { RateLimitService } from './rate-limits/rate-limit.service';
// Its schema and migrations: the tests migrate a template database once and copy it per file.
export { GATEWAY_SCHEMA } from './edge/app.module';
export { GATEWAY_MIGRATIONS } from './migrations';
