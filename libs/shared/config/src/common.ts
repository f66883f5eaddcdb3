import { env } from './env';

/** Variables every service reads: where its backing services are and how it logs. */
export const commonEnv = {
  NODE_ENV: env.oneOf(['development', 'production', 'test'] as const, {
    default: 'development',
    description: 'Runtime mode; production turns off development defaults',
  }),
  LOG_LEVEL: env.oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, {
    default: 'info',
    description: 'pino log level',
  }),
  NATS_URL: env.string({ default: 'nats://127.0.0.1:4222', description: 'NATS servers, comma separated' }),
  NATS_CLUSTER_SIZE: env.int({
    default: 0,
    min: 0,
    max: 99,
    description:
      'Servers in the NATS cluster; 0 means as many as NATS_URL names. A server routed to no more than half of them is cut off: bus requests through it fail at once',
  }),
  BUS_NAMESPACE: env.string({
    default: '',
    description: 'Prefix for every NATS subject and JetStream stream, to share one NATS between environments',
  }),
  BUS_TIMEOUT_MS: env.int({
    default: 5000,
    min: 100,
    description: 'How long a bus request waits for a reply',
  }),
  JETSTREAM_REPLICAS: env.int({
    default: 1,
    min: 1,
    max: 5,
    description: 'Replicas of each JetStream stream the services create (3 on a 3-node NATS cluster)',
  }),
  READINESS_DRAIN_MS: env.int({
    default: 0,
    min: 0,
    description:
      'On SIGTERM, how long the process keeps serving while answering 503 to its readiness probe, before it drains',
  }),
  SHUTDOWN_GRACE_MS: env.int({
    default: 2000,
    min: 0,
    description: 'On SIGTERM, how long a service keeps answering messages already taken after unsubscribing',
  }),
};

export const databaseEnv = {
  DATABASE_URL: env.url({
    protocols: ['postgres', 'postgresql'],
    default: 'postgres://postgres@127.0.0.1:5432/licensing',
    production: null,
    description: 'PostgreSQL connection URL',
  }),
  DATABASE_POOL_SIZE: env.int({ default: 10, min: 1, description: 'Connections in the pool per process' }),
  // Generous: a lock wait or a busy pool under load is not an outage. They bound what TCP would
  // otherwise wait (minutes) on a PostgreSQL that stops answering without a reset.
  DATABASE_CONNECT_TIMEOUT_MS: env.int({
    default: 5000,
    min: 100,
    description:
      'How long a query waits for a connection (a free one of the pool, or a new one), then fails as unavailable (not in analytics-service)',
  }),
  DATABASE_QUERY_TIMEOUT_MS: env.int({
    default: 30_000,
    min: 100,
    description:
      'How long a query waits for its result, then fails as unavailable and closes its connection (migrations at boot, and analytics-service, have no limit)',
  }),
  DATABASE_AUTO_CREATE: env.bool({
    default: true,
    production: false,
    description: 'Create the database named in DATABASE_URL when it does not exist',
  }),
};

/**
 * Where a bus service serves its health endpoints: every service has them, each on its own default
 * port so that `npm start` runs them side by side.
 */
export function healthEnv(defaultPort: number) {
  return {
    HOST: env.string({
      default: '127.0.0.1',
      production: '0.0.0.0',
      description: 'Interface for the health endpoints',
    }),
    HEALTH_PORT: env.int({
      default: defaultPort,
      min: 0,
      max: 65535,
      description: 'Port of the probes (/health/live, /health/ready) and /metrics',
    }),
  };
}

/** The serial-status cache in Redis, as its one writer (the revocation service) keeps it. */
export const serialCacheEnv = {
  REVOCATION_CACHE_TTL_SECONDS: env.int({
    default: 3600,
    min: 1,
    description: 'How long a cached serial status lives; events and write-through keep it current meanwhile',
  }),
  REVOCATION_NEGATIVE_TTL_SECONDS: env.int({
    default: 30,
    min: 1,
    description:
      'How long "no such serial" is cached, so unknown serials do not reach PostgreSQL on every check',
  }),
};
