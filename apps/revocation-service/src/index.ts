// What other projects may use of this service: starting it in-process (the end-to-end tests do).
// Production starts it through main.ts.
export { startRevocationService } from './app';
export { loadRevocationServiceConfig } from './config';
// Where a serial's cache entry lives in Redis right now: tests look at the cache through it.
export { serialCacheKey } from '@licensing/shared/serial-cache';
// The id a client's report_id is stored under (scoped to its organization): tests find stored reports by it.
export { scopedReportId } from './revocation/report-ids';
