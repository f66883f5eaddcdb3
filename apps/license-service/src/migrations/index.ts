import { CreateLicensing1795375637788 } from './1795375637788-CreateLicensing';

/** In order of application; the timestamp in each name is when it was generated. */
export const LICENSE_MIGRATIONS = [CreateLicensing1795375637788];
