import { createHash } from 'node:crypto';
import { ConfigOf, commonEnv, databaseEnv, env, loadConfig, redisEnv } from '@licensing/shared/config';

/** Well known, so only for development: production refuses to start without RESPONSE_MASTER_KEYS. */
const DEVELOPMENT_RESPONSE_MASTER_KEY = `dev:${createHash('sha256').update('licensing-development-response-key').digest('base64')}`;

const gatewayEnv = {
  ...commonEnv,
  ...databaseEnv,
  HOST: env.string({
    default: '127.0.0.1',
    production: '0.0.0.0',
    description: 'Interface the HTTP API listens on',
  }),
  PORT: env.int({ default: 3000, min: 0, max: 65535, description: 'Port the HTTP API listens on' }),
  // Outside Kubernetes nothing else gives a load balancer the time to see the gateway unready;
  // on Kubernetes the pod's preStop pause does, and the manifests set 0.
  READINESS_DRAIN_MS: env.int({
    default: 5000,
    min: 0,
    description:
      'On SIGTERM, how long the gateway keeps serving while answering 503 to its readiness probe, before it stops listening (not on SIGINT)',
  }),
  DIRECT_ROUTES: env.bool({
    default: true,
    description:
      "Serve the hot routes (check-revocation, sync, verify, validate, license create, single GETs) past Nest's pipeline; off, Nest serves every route and answers alike, slower",
  }),
  API_KEY_CACHE_TTL_MS: env.int({
    default: 30_000,
    min: 0,
    description:
      'How long a gateway trusts a resolved API key without asking PostgreSQL (revocations are broadcast at once)',
  }),
  BOOTSTRAP_DEFAULT_ORG: env.bool({
    default: true,
    production: false,
    description: 'On first boot, create the "default" organization and print its admin key once',
  }),
  IDEMPOTENCY_KEY_TTL_HOURS: env.int({
    default: 24,
    min: 24,
    description: 'How long an Idempotency-Key and the answer of its first request are kept',
  }),
  REVOCATION_LIST_MAX_AGE_SECONDS: env.int({
    default: 60,
    min: 0,
    description:
      "Cache-Control max-age of a product's revocation list: how long a CDN or client may reuse it",
  }),
  RESPONSE_MASTER_KEYS: env.string({
    default: DEVELOPMENT_RESPONSE_MASTER_KEY,
    production: null,
    description:
      'AES-256 keys that encrypt the organizations\' response-signing keys at rest: "<version>:<base64 32 bytes>", comma separated, newest first',
  }),
  MASTER_KEY_RESEAL_MS: env.int({
    default: 60_000,
    min: 50,
    description:
      'How often response keys sealed with an older master key are sealed again with the newest (one replica at a time)',
  }),
  TRUST_PROXY: env.bool({ default: false, description: 'Trust X-Forwarded-* headers (behind an ingress)' }),
  PUSH_FEED_IDLE_MS: env.int({
    default: 60_000,
    min: 0,
    description:
      'How long a gateway keeps reading license events after its last push stream (GET /licenses/events) closed; with none open it reads none',
  }),
  ...redisEnv('Redis holding the rate-limit state that every gateway replica shares'),
  RATE_LIMIT_ENABLED: env.bool({ default: true, description: 'Limit requests per API key and route class' }),
  RATE_LIMIT_WINDOW_SECONDS: env.int({
    default: 60,
    min: 1,
    description: 'Window of the admin, read and client limits',
  }),
  RATE_LIMIT_ADMIN: env.int({
    default: 30_000,
    min: 1,
    description: 'Admin writes per API key per window',
  }),
  RATE_LIMIT_READ: env.int({ default: 60_000, min: 1, description: 'Reads (GET) per API key per window' }),
  RATE_LIMIT_CLIENT: env.int({
    default: 600_000,
    min: 1,
    description: 'Client traffic (verify, validate, sync, activations, ...) per API key per window',
  }),
  RATE_LIMIT_ACTIVATIONS: env.int({
    default: 60,
    min: 1,
    description: 'Activation requests per license per activation window, whatever the key',
  }),
  RATE_LIMIT_ACTIVATIONS_WINDOW_SECONDS: env.int({
    default: 3600,
    min: 1,
    description: 'Window of the per-license activation limit',
  }),
};

export type GatewayConfig = ConfigOf<typeof gatewayEnv>;

export const loadGatewayConfig = (source?: Record<string, string | undefined>): GatewayConfig =>
  loadConfig(gatewayEnv, source);

/** Injection token for the gateway's typed configuration. */
export const GATEWAY_CONFIG = Symbol('GatewayConfig');
