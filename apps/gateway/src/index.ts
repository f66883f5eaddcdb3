// What other projects may use of the gateway: starting it in-process, creating organizations and
// running operator commands (the end-to-end tests do). Production starts it through main.ts.
export { startGateway } from './edge/app';
export { runCli } from './cli';
export { loadGatewayConfig } from './config';
export { OrganizationsService } from './identity/organizations.service';
export { LicenseEventHub } from './push/license-event-hub';
export { RateLimitService } from './rate-limits/rate-limit.service';
