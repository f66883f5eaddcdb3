import { CreateSyncReports1795377014165 } from './1795377014165-CreateSyncReports';
import { PartitionSyncReports1795900000000 } from './1795900000000-PartitionSyncReports';
import { DedupeReportsAndLastSeen1796000000000 } from './1796000000000-DedupeReportsAndLastSeen';
import { HourMasksAndMonthlyReportIds1797000000000 } from './1797000000000-HourMasksAndMonthlyReportIds';
import { CreateMeteredUses1799100000001 } from './1799100000001-CreateMeteredUses';

/** In order of application; the timestamp in each name is when it was generated (or written). */
export const ANALYTICS_MIGRATIONS = [
  CreateSyncReports1795377014165,
  PartitionSyncReports1795900000000,
  DedupeReportsAndLastSeen1796000000000,
  HourMasksAndMonthlyReportIds1797000000000,
  CreateMeteredUses1799100000001,
];
