// What other projects may use of this service: starting it in-process (the end-to-end tests do).
// Production starts it through main.ts.
export { startAnalyticsService } from './app';
export { loadAnalyticsServiceConfig } from './config';
export { PartitionsService } from './partitions/partitions.service';
