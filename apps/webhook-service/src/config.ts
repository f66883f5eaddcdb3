import { createHash } from 'node:crypto';
import { ConfigOf, commonEnv, databaseEnv, env, healthEnv, loadConfig } from '@licensing/shared/config';

/** Well known, so only for development: production refuses to start without WEBHOOK_MASTER_KEYS. */
const DEVELOPMENT_MASTER_KEY = `dev:${createHash('sha256').update('licensing-development-webhook-key').digest('base64')}`;

const SECOND = 1_000;
const HOUR = 3_600 * SECOND;
const DAY = 24 * HOUR;

const webhookServiceEnv = {
  ...commonEnv,
  ...databaseEnv,
  ...healthEnv(3105),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: env.bool({
    default: false,
    production: false,
    description:
      'Deliver to plain http and to loopback, private, link-local and metadata addresses (npm start sets it for local receivers)',
  }),
  WEBHOOK_MASTER_KEYS: env.string({
    default: DEVELOPMENT_MASTER_KEY,
    production: null,
    description:
      'AES-256 keys that encrypt webhook secrets at rest: "<version>:<base64 32 bytes>", comma separated, newest first',
  }),
  MASTER_KEY_RESEAL_MS: env.int({
    default: 60_000,
    min: 50,
    description:
      'How often webhook secrets sealed with an older master key are sealed again with the newest (one replica at a time)',
  }),
  WEBHOOK_TIMEOUT_MS: env.int({
    default: 10 * SECOND,
    min: 100,
    max: 60 * SECOND,
    description: 'How long a receiver has to answer (connect, headers and body) before the attempt fails',
  }),
  WEBHOOK_MAX_ATTEMPTS: env.int({
    default: 14,
    min: 1,
    max: 50,
    description: 'Attempts of one delivery before it is failed',
  }),
  WEBHOOK_RETRY_BASE_MS: env.int({
    default: 60 * SECOND,
    min: 1,
    description:
      'Ceiling of the first retry delay; each retry doubles it (full jitter: a random delay below it)',
  }),
  WEBHOOK_RETRY_MAX_MS: env.int({
    default: 12 * HOUR,
    min: 1,
    description: 'Largest ceiling of a retry delay',
  }),
  WEBHOOK_DISABLE_AFTER_MS: env.int({
    default: 3 * DAY,
    min: 1,
    description: 'An endpoint that has had only failed attempts for this long is disabled (webhook.disabled)',
  }),
  WEBHOOK_CONCURRENCY: env.int({
    default: 64,
    min: 1,
    max: 1_000,
    description: 'Deliveries in flight per process, over every endpoint',
  }),
  WEBHOOK_ENDPOINT_CONCURRENCY: env.int({
    default: 4,
    min: 1,
    max: 100,
    description:
      'Deliveries in flight per endpoint per process: a slow receiver holds at most this many workers',
  }),
  WEBHOOK_POLL_MS: env.int({
    default: 1_000,
    min: 20,
    description: 'How often due retries are looked for (new events and redeliveries wake the worker at once)',
  }),
  WEBHOOK_SWEEP_MS: env.int({
    default: 60 * SECOND,
    min: 20,
    description:
      'How often endpoints failing for WEBHOOK_DISABLE_AFTER_MS are looked for; one replica at a time',
  }),
};

export type WebhookServiceConfig = ConfigOf<typeof webhookServiceEnv>;

export const loadWebhookServiceConfig = (source?: Record<string, string | undefined>): WebhookServiceConfig =>
  loadConfig(webhookServiceEnv, source);

/** Injection token for the service's typed configuration. */
export const WEBHOOK_CONFIG = Symbol('WebhookServiceConfig');
