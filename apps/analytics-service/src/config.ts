import { ConfigOf, commonEnv, databaseEnv, env, healthEnv, loadConfig } from '@licensing/shared/config';

const analyticsServiceEnv = {
  ...commonEnv,
  ...databaseEnv,
  ...healthEnv(3104),
  ANALYTICS_BATCH_SIZE: env.int({
    default: 500,
    min: 1,
    max: 10_000,
    description: 'Most sync reports taken from the stream and written to PostgreSQL in one statement',
  }),
  // Reports are written as they arrive, whatever this is; a longer pull only means fewer pull
  // requests while the stream is idle. The floor keeps an idle consumer from asking every instant.
  ANALYTICS_BATCH_WAIT_MS: env.int({
    default: 5000,
    min: 1000,
    max: 30_000,
    description:
      'How long each pull request on the sync-report stream stays open; reports are written as they arrive, not when it ends',
  }),
  // A statement costs ~1 ms of PostgreSQL before its first report: under a steady flow shared by
  // several pullers, a few milliseconds of waiting make batches of dozens instead of a handful.
  ANALYTICS_BATCH_LINGER_MS: env.int({
    default: 50,
    min: 0,
    max: 1000,
    description: 'How long a batch short of ANALYTICS_BATCH_SIZE waits for more reports before it is written',
  }),
  // PostgreSQL's work per batch is one statement on one core; a second statement in flight lets it
  // use another while the first waits on its counters' row locks (docs/analytics.md, Ingest).
  ANALYTICS_CONCURRENCY: env.int({
    default: 2,
    min: 1,
    max: 16,
    description:
      'Batches of sync reports this process stores at the same time (one pull and one connection each)',
  }),
  ANALYTICS_RAW_RETENTION_DAYS: env.int({
    default: 30,
    min: 1,
    max: 3660,
    description:
      'Days of raw sync reports (and of the per-license and per-machine active rows) kept; older days are dropped a whole partition at a time',
  }),
  ANALYTICS_ROLLUP_RETENTION_DAYS: env.int({
    default: 730,
    min: 31,
    max: 36_600,
    description:
      'Days of hourly and daily rollups kept; older months are dropped a whole partition at a time',
  }),
  ANALYTICS_PARTITIONS_AHEAD_DAYS: env.int({
    default: 2,
    min: 1,
    max: 60,
    description: 'Days of partitions created ahead of today, at boot and every hour',
  }),
};

export type AnalyticsServiceConfig = ConfigOf<typeof analyticsServiceEnv>;

export const loadAnalyticsServiceConfig = (
  source?: Record<string, string | undefined>,
): AnalyticsServiceConfig => loadConfig(analyticsServiceEnv, source);

/** Injection token for the service's typed configuration. */
export const ANALYTICS_CONFIG = Symbol('AnalyticsServiceConfig');
