/**
 * Every request/reply subject on the bus. One constant per message, versioned, so that a handler
 * and its callers can never disagree on a string.
 */
export const Subjects = {
  product: {
    create: 'product.create.v1',
    list: 'product.list.v1',
    get: 'product.get.v1',
    update: 'product.update.v1',
    delete: 'product.delete.v1',
  },
  license: {
    create: 'license.create.v1',
    list: 'license.list.v1',
    get: 'license.get.v1',
    revoke: 'license.revoke.v1',
    verify: 'license.verify.v1',
    update: 'license.update.v1',
    validate: 'license.validate.v1',
    /** Stored status of up to 100 serials: the revocation cache's source on a miss. */
    statuses: 'license.statuses.v1',
  },
  keyPair: {
    create: 'key-pair.create.v1',
    list: 'key-pair.list.v1',
    get: 'key-pair.get.v1',
    delete: 'key-pair.delete.v1',
  },
  /** The license service's copy of each product: what signing and seat rules need, kept in step by the product service. */
  catalog: {
    upsert: 'license.catalog.upsert.v1',
    retire: 'license.catalog.retire.v1',
    publicKey: 'license.catalog.public-key.v1',
  },
  activation: {
    create: 'activation.create.v1',
    list: 'activation.list.v1',
    delete: 'activation.delete.v1',
    heartbeat: 'activation.heartbeat.v1',
  },
  revocation: {
    check: 'revocation.check.v1',
    sync: 'revocation.sync.v1',
    /** Write-through from the license service: the new status is in the cache before the change is answered. */
    put: 'revocation.cache.put.v1',
  },
  analytics: {
    usage: 'analytics.usage.v1',
    features: 'analytics.features.v1',
    versions: 'analytics.versions.v1',
    licenseUsage: 'analytics.license-usage.v1',
  },
  /** Broadcasts (no queue group): every gateway replica receives them. */
  identity: {
    apiKeyRevoked: 'identity.api-key.revoked.v1',
  },
} as const;
