import { CreateIdentity1795375819351 } from './1795375819351-CreateIdentity';
import { AddOrganizationRateLimits1795430945058 } from './1795430945058-AddOrganizationRateLimits';

/** In order of application; the timestamp in each name is when it was generated. */
export const GATEWAY_MIGRATIONS = [CreateIdentity1795375819351, AddOrganizationRateLimits1795430945058];
