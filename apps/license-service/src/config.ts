import { createHash } from 'node:crypto';
import {
  ConfigOf,
  commonEnv,
  databaseEnv,
  env,
  healthEnv,
  loadConfig,
  redisEnv,
} from '@licensing/shared/config';

/** Well known, so only for development: production refuses to start without SIGNING_MASTER_KEYS. */
const DEVELOPMENT_MASTER_KEY = `dev:${createHash('sha256').update('licensing-development-master-key').digest('base64')}`;

const licenseServiceEnv = {
  ...commonEnv,
  ...databaseEnv,
  ...redisEnv('Redis of the serial-status cache, which verify reads before PostgreSQL'),
  ...healthEnv(3102),
  LICENSE_EXPIRY_SWEEP_MS: env.int({
    default: 30_000,
    min: 50,
    description:
      'How often overdue active licenses are marked expired (license.expired); one replica at a time',
  }),
  ACTIVATION_SWEEP_MS: env.int({
    default: 1_000,
    min: 50,
    description: 'How often activations past their heartbeat deadline are removed (activation.expired)',
  }),
  USES_RESET_SWEEP_MS: env.int({
    default: 60_000,
    min: 50,
    description:
      "How often licenses still showing uses of a past period of their policy's uses_reset get them back to 0 (license.usage_reset)",
  }),
  REVOCATION_LIST_NEXT_UPDATE_SECONDS: env.int({
    default: 86_400,
    min: 60,
    description:
      "How far after its issue a revocation list's next_update lies: when clients should fetch a newer one",
  }),
  SIGNING_MASTER_KEYS: env.string({
    default: DEVELOPMENT_MASTER_KEY,
    production: null,
    description:
      'AES-256 keys that encrypt signing keys at rest: "<version>:<base64 32 bytes>", comma separated, newest first',
  }),
  MASTER_KEY_RESEAL_MS: env.int({
    default: 60_000,
    min: 50,
    description:
      'How often private keys sealed with an older master key are sealed again with the newest (one replica at a time)',
  }),
  EVENT_REPLAY_MS: env.int({
    default: 10_000,
    min: 50,
    description:
      'How often license events newer than the database are written back (a restore, an asynchronous failover); each run also moves the checkpoint it starts from',
  }),
  RESTORE_ACCEPT_EVENT_GAP: env.bool({
    default: false,
    description:
      "Start even though the events stream no longer holds every license event since the database's checkpoint (a backup older than the stream keeps): the changes in between are lost",
  }),
};

export type LicenseServiceConfig = ConfigOf<typeof licenseServiceEnv>;

export const loadLicenseServiceConfig = (source?: Record<string, string | undefined>): LicenseServiceConfig =>
  loadConfig(licenseServiceEnv, source);

/** Injection token for the license service's typed configuration. */
export const LICENSE_SERVICE_CONFIG = Symbol('LicenseServiceConfig');
