// What other projects may use of the gateway: starting it in-process and creating organizations
// (the end-to-end tests do). Production starts it through main.ts.
export { startGateway } from './app';
export { loadGatewayConfig } from './config';
export { OrganizationsService } from './identity/organizations.service';
