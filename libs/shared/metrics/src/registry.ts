import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The one registry of a process: what `/metrics` serves. Metrics are module-level singletons, so a
 * process that runs several Nest applications (the end-to-end tests) shares them; in production a
 * process is one application.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

/** Latency buckets (seconds) for requests that are a few milliseconds when healthy. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One labelled value, set by a source when Prometheus scrapes. */
export type Sample<Label extends string> = (labels: Record<Label, string>, value: number) => void;
export type Source<Label extends string> = (sample: Sample<Label>) => Promise<void> | void;

/**
 * A gauge read at scrape time from whatever sources the process registered (a consumer's lag, an
 * outbox's backlog): nothing is computed between scrapes. A source that fails leaves its series out.
 */
export class SampledGauge<Label extends string> {
  private readonly sources = new Set<Source<Label>>();

  constructor(name: string, help: string, labelNames: readonly Label[]) {
    const sources = this.sources;
    new Gauge<Label>({
      name,
      help,
      labelNames,
      registers: [metricsRegistry],
      async collect() {
        this.reset();
        const sample: Sample<Label> = (labels, value) => this.set(labels, value);
        await Promise.all(
          [...sources].map(async (source) => {
            try {
              await source(sample);
            } catch {
              // Left out of this scrape; the next one tries again.
            }
          }),
        );
      },
    });
  }

  /** Adds a source; the function returned removes it (at shutdown). */
  addSource(source: Source<Label>): () => void {
    this.sources.add(source);
    return () => this.sources.delete(source);
  }
}

export const Metrics = {
  /** Every HTTP request the gateway answered: `route` is the route's template, never the raw path. */
  httpRequestDuration: new Histogram({
    name: 'licensing_http_request_duration_seconds',
    help: 'HTTP requests answered by the gateway, by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [metricsRegistry],
  }),
  /** Every bus request a process made, as its caller saw it: `outcome` is `ok` or the error code. */
  busRequestDuration: new Histogram({
    name: 'licensing_bus_request_duration_seconds',
    help: 'NATS request/reply calls made by this process, by subject and outcome (ok or the error code)',
    labelNames: ['subject', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [metricsRegistry],
  }),
  /** Serials looked up in the revocation cache: `hit`, `miss`, or `unavailable` (Redis down: all to PostgreSQL). */
  revocationCacheLookups: new Counter({
    name: 'licensing_revocation_cache_lookups_total',
    help: 'Serials looked up in the Redis revocation cache, by result (hit, miss, unavailable)',
    labelNames: ['result'] as const,
    registers: [metricsRegistry],
  }),
  licensesCreated: new Counter({
    name: 'licensing_licenses_created_total',
    help: 'Licenses created (committed)',
    registers: [metricsRegistry],
  }),
  activationsCreated: new Counter({
    name: 'licensing_activations_created_total',
    help: 'Activations (seats) created (committed)',
    registers: [metricsRegistry],
  }),
  syncs: new Counter({
    name: 'licensing_syncs_total',
    help: 'Usage reports stored durably (acknowledged by JetStream), by the license status answered',
    labelNames: ['status'] as const,
    registers: [metricsRegistry],
  }),
  webhookDeliveries: new Counter({
    name: 'licensing_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts, by outcome (delivered, failed)',
    labelNames: ['outcome'] as const,
    registers: [metricsRegistry],
  }),
  deadLettered: new Counter({
    name: 'licensing_dead_lettered_total',
    help: 'Messages a durable consumer set aside on the dead-letter stream, by durable',
    labelNames: ['durable'] as const,
    registers: [metricsRegistry],
  }),
  /** Messages not yet delivered plus delivered and not yet acknowledged, per durable (all replicas). */
  consumerLag: new SampledGauge(
    'licensing_jetstream_consumer_lag',
    'Messages of a durable JetStream consumer not yet acknowledged (pending + ack pending)',
    ['stream', 'durable'] as const,
  ),
  /** Events written by a service and not yet published to JetStream. */
  outboxBacklog: new SampledGauge(
    'licensing_outbox_backlog',
    'Events in a service outbox table not yet published to JetStream, by schema',
    ['schema'] as const,
  ),
  /** 1 while a dependency answers, 0 while it does not (what the readiness probe reports). */
  dependencyUp: new SampledGauge(
    'licensing_dependency_up',
    'Whether a dependency of this process answers (1) or not (0): nats, database, redis',
    ['dependency'] as const,
  ),
};
