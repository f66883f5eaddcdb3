import { CreateSyncReports1795377014165 } from './1795377014165-CreateSyncReports';

/** In order of application; the timestamp in each name is when it was generated. */
export const ANALYTICS_MIGRATIONS = [CreateSyncReports1795377014165];
