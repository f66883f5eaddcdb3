import { CreateIdentity1795375819351 } from './1795375819351-CreateIdentity';

/** In order of application; the timestamp in each name is when it was generated. */
export const GATEWAY_MIGRATIONS = [CreateIdentity1795375819351];
