import {
  ActivationCreatedReply,
  ActivationListView,
  ActivationView,
  CreateActivationDto,
  ListActivationsQueryDto,
  OfflineActivationDto,
  OfflineActivationMessage,
  OfflineActivationReply,
  OfflineReleaseDto,
  ValidateLicenseDto,
  ValidationResultView,
} from './activations/activation.dto';
import {
  ActiveQueryDto,
  ActiveView,
  AnalyticsRangeQueryDto,
  FeaturesView,
  LicenseUsageRequest,
  LicenseUsageView,
  UsageQueryDto,
  UsageView,
  VersionsView,
} from './analytics/analytics.dto';
import { CatalogProductDto } from './catalog/catalog.dto';
import { CheckoutMessage, CheckoutView } from './licenses/checkout.dto';
import {
  CreateLicenseTokenMessage,
  CreatedLicenseTokenView,
  LicenseTokenListView,
  ListLicenseTokensMessage,
  ResolveCredentialDto,
  ResolveCredentialReply,
} from './credentials/credential.dto';
import { IdDto, MessageView } from './common/common.dto';
import {
  CreateEntitlementDto,
  EntitlementListView,
  EntitlementView,
  LicenseEntitlementsMessage,
  LicenseUsesView,
  UpdateEntitlementMessage,
  UsageIncrementMessage,
} from './entitlements/entitlement.dto';
import { PageQueryDto } from './common/pagination.dto';
import { CreateKeyPairDto, KeyPairListView, KeyPairView } from './key-pairs/key-pair.dto';
import {
  CreateLicenseDto,
  LicenseListView,
  LicenseView,
  ListLicensesQueryDto,
  UpdateLicenseMessage,
  VerifyLicenseDto,
  VerifyResultView,
} from './licenses/license.dto';
import {
  CreateProductDto,
  ProductListView,
  ProductPublicKeyView,
  ProductView,
  UpdateProductMessage,
} from './products/product.dto';
import {
  CheckRevocationDto,
  CheckRevocationView,
  SerialStatus,
  SyncReportDto,
  SyncResultView,
} from './revocation/revocation.dto';
import {
  CreatePolicyDto,
  ListPoliciesQueryDto,
  PolicyListView,
  PolicyView,
  UpdatePolicyMessage,
} from './policies/policy.dto';
import {
  CreateProcessMessage,
  ListProcessesMessage,
  ProcessListView,
  ProcessCreatedReply,
  ProcessRefDto,
  ProcessView,
} from './policies/process.dto';
import {
  CreateRelayFileMessage,
  ImportRelayReportDto,
  ListRelayFilesQueryDto,
  RelayFileCreatedView,
  RelayFileListView,
  RelayFileView,
  RelayReportImportView,
} from './relays/relay.dto';
import { RevocationListReply, RevocationListRequest } from './revocation/revocation-list.dto';
import { SerialStatusesRequest } from './revocation/serial-status.dto';
import { SerialStatusPutDto } from './revocation/serial-status-put.dto';
import {
  CreateWebhookDto,
  DeliveryDetailView,
  DeliveryListView,
  DeliveryView,
  ListDeliveriesMessage,
  UpdateWebhookMessage,
  WebhookCreatedView,
  WebhookListView,
  WebhookSecretView,
  WebhookTestView,
  WebhookView,
} from './webhooks/webhook.dto';

/**
 * One message on the bus: its versioned subject, and in its type what is sent and what comes back.
 * `bus.send(Messages.license.create, dto)` needs a `CreateLicenseDto` and answers a `LicenseView`;
 * a handler declared with `@Handles(Messages.license.create)` must answer one. The request is
 * validated on receipt with the same class-validator class the gateway validated it with.
 */
export interface MessageDefinition<Request, Reply> {
  readonly subject: string;
  /**
   * The reply's class, for a message the gateway answers over HTTP: the OpenAPI document's schema
   * of that answer is read from it.
   */
  readonly replyType?: new () => Reply;
  /**
   * For work that takes seconds by nature (generating an RSA key): the caller waits at least this
   * long for the reply, even when its bus timeout (BUS_TIMEOUT_MS) is shorter.
   */
  readonly minTimeoutMs?: number;
  /** Types only: these two members never exist at run time. */
  readonly request?: Request;
  readonly reply?: Reply;
}

/** A definition for `subject` (`<resource>.<verb>.v<N>`: a breaking change is a new version beside the old). */
export function defineMessage<Request, Reply>(
  subject: string,
  replyType?: new () => Reply,
  options: { minTimeoutMs?: number } = {},
): MessageDefinition<Request, Reply> {
  return { subject, replyType, ...options };
}

/** The request type of a message definition. */
export type RequestOf<M> = M extends MessageDefinition<infer Request, unknown> ? Request : never;
/** The reply type of a message definition. */
export type ReplyOf<M> = M extends MessageDefinition<unknown, infer Reply> ? Reply : never;

/** The reply of a command whose only answer is that it was done. */
export interface OkReply {
  ok: true;
}

/** Every request/reply message between the gateway and the services, and between services. */
export const Messages = {
  product: {
    create: defineMessage<CreateProductDto, ProductView>('product.create.v1', ProductView),
    list: defineMessage<PageQueryDto, ProductListView>('product.list.v1', ProductListView),
    get: defineMessage<IdDto, ProductView>('product.get.v1', ProductView),
    update: defineMessage<UpdateProductMessage, ProductView>('product.update.v1', ProductView),
    delete: defineMessage<IdDto, MessageView>('product.delete.v1', MessageView),
  },
  license: {
    create: defineMessage<CreateLicenseDto, LicenseView>('license.create.v1', LicenseView),
    list: defineMessage<ListLicensesQueryDto, LicenseListView>('license.list.v1', LicenseListView),
    get: defineMessage<IdDto, LicenseView>('license.get.v1', LicenseView),
    revoke: defineMessage<IdDto, MessageView>('license.revoke.v1', MessageView),
    verify: defineMessage<VerifyLicenseDto, VerifyResultView>('license.verify.v1', VerifyResultView),
    update: defineMessage<UpdateLicenseMessage, LicenseView>('license.update.v1', LicenseView),
    validate: defineMessage<ValidateLicenseDto, ValidationResultView>(
      'license.validate.v1',
      ValidationResultView,
    ),
    /** Records that the application checked in now: what a policy's check_in_interval_days asks for. */
    checkIn: defineMessage<IdDto, LicenseView>('license.check-in.v1', LicenseView),
    /** Stored status of up to 100 serials, of any organization: the revocation cache's source on a miss. */
    statuses: defineMessage<SerialStatusesRequest, SerialStatus[]>('license.statuses.v1'),
    /** A product's revocation list (or a delta), signed by the product's key pair in the license service. */
    revocationList: defineMessage<RevocationListRequest, RevocationListReply>('license.revocation-list.v1'),
    /** Adds catalog entitlements to the license; it is signed again when its entitlements changed. */
    attachEntitlements: defineMessage<LicenseEntitlementsMessage, LicenseView>(
      'license.entitlements.attach.v1',
      LicenseView,
    ),
    detachEntitlements: defineMessage<LicenseEntitlementsMessage, LicenseView>(
      'license.entitlements.detach.v1',
      LicenseView,
    ),
    /** One conditional UPDATE: exact under concurrency, and a refused increment changes nothing. */
    incrementUsage: defineMessage<UsageIncrementMessage, LicenseUsesView>(
      'license.usage.increment.v1',
      LicenseUsesView,
    ),
    resetUsage: defineMessage<IdDto, LicenseUsesView>('license.usage.reset.v1', LicenseUsesView),
    /** A license file signed now that expires on its own (`exp`), for offline use. */
    checkout: defineMessage<CheckoutMessage, CheckoutView>('license.checkout.v1', CheckoutView),
  },
  /** The organization's entitlement catalog, owned by the license service. */
  entitlement: {
    create: defineMessage<CreateEntitlementDto, EntitlementView>('entitlement.create.v1', EntitlementView),
    list: defineMessage<PageQueryDto, EntitlementListView>('entitlement.list.v1', EntitlementListView),
    get: defineMessage<IdDto, EntitlementView>('entitlement.get.v1', EntitlementView),
    update: defineMessage<UpdateEntitlementMessage, EntitlementView>(
      'entitlement.update.v1',
      EntitlementView,
    ),
    delete: defineMessage<IdDto, MessageView>('entitlement.delete.v1', MessageView),
  },
  /** A product's licensing model, reused by many licenses: owned by the license service. */
  policy: {
    create: defineMessage<CreatePolicyDto, PolicyView>('policy.create.v1', PolicyView),
    list: defineMessage<ListPoliciesQueryDto, PolicyListView>('policy.list.v1', PolicyListView),
    get: defineMessage<IdDto, PolicyView>('policy.get.v1', PolicyView),
    update: defineMessage<UpdatePolicyMessage, PolicyView>('policy.update.v1', PolicyView),
    delete: defineMessage<IdDto, MessageView>('policy.delete.v1', MessageView),
  },
  /** The processes running on one activation's machine, limited by its policy's max_processes. */
  process: {
    create: defineMessage<CreateProcessMessage, ProcessCreatedReply>('process.create.v1'),
    list: defineMessage<ListProcessesMessage, ProcessListView>('process.list.v1', ProcessListView),
    heartbeat: defineMessage<ProcessRefDto, ProcessView>('process.heartbeat.v1', ProcessView),
    delete: defineMessage<ProcessRefDto, MessageView>('process.delete.v1', MessageView),
  },
  keyPair: {
    // An RSA-3072 key takes a random time to find: about a second, several on a busy machine.
    create: defineMessage<CreateKeyPairDto, KeyPairView>('key-pair.create.v1', KeyPairView, {
      minTimeoutMs: 30_000,
    }),
    list: defineMessage<PageQueryDto, KeyPairListView>('key-pair.list.v1', KeyPairListView),
    get: defineMessage<IdDto, KeyPairView>('key-pair.get.v1', KeyPairView),
    delete: defineMessage<IdDto, MessageView>('key-pair.delete.v1', MessageView),
  },
  /**
   * The license service's copy of each product: what signing and seat rules need. It converges from
   * product events; `upsert` is the product service's early notice after a commit, `retire` the
   * license service's consent to a deletion (refused while the product has licenses; final).
   */
  catalog: {
    upsert: defineMessage<CatalogProductDto, OkReply>('license.catalog.upsert.v1'),
    retire: defineMessage<IdDto, OkReply>('license.catalog.retire.v1'),
    publicKey: defineMessage<IdDto, ProductPublicKeyView>(
      'license.catalog.public-key.v1',
      ProductPublicKeyView,
    ),
  },
  activation: {
    create: defineMessage<CreateActivationDto, ActivationCreatedReply>('activation.create.v1'),
    list: defineMessage<ListActivationsQueryDto, ActivationListView>(
      'activation.list.v1',
      ActivationListView,
    ),
    delete: defineMessage<IdDto, MessageView>('activation.delete.v1', MessageView),
    heartbeat: defineMessage<IdDto, ActivationView>('activation.heartbeat.v1', ActivationView),
    /** A checkout of the activation's license, bound to the activation's fingerprint. */
    checkout: defineMessage<CheckoutMessage, CheckoutView>('activation.checkout.v1', CheckoutView),
    /**
     * An air-gapped machine's request file in, the signed activation file out: a seat like any other.
     * v2 carries the organization's checkout TTL, which v1 lacks.
     */
    offlineCreate: defineMessage<OfflineActivationMessage, OfflineActivationReply>(
      'activation.offline.create.v2',
    ),
    /**
     * The same without the TTL, as the previous release's gateways send it: served, with the
     * default TTL, until no running release sends it.
     */
    offlineCreateV1: defineMessage<OfflineActivationDto, OfflineActivationReply>(
      'activation.offline.create.v1',
    ),
    /** A release file signed by the machine's key: frees the seat; idempotent. */
    offlineRelease: defineMessage<OfflineReleaseDto, MessageView>(
      'activation.offline.release.v1',
      MessageView,
    ),
  },
  /** Credentials that reach one license (license tokens) or one activation (machine tokens). */
  credential: {
    createLicenseToken: defineMessage<CreateLicenseTokenMessage, CreatedLicenseTokenView>(
      'credential.license-token.create.v1',
      CreatedLicenseTokenView,
    ),
    listLicenseTokens: defineMessage<ListLicenseTokensMessage, LicenseTokenListView>(
      'credential.license-token.list.v1',
      LicenseTokenListView,
    ),
    revokeLicenseToken: defineMessage<IdDto, MessageView>('credential.license-token.revoke.v1', MessageView),
    /** A token by the hash of its secret, of any organization: the gateway's cache miss. */
    resolve: defineMessage<ResolveCredentialDto, ResolveCredentialReply>('credential.resolve.v1'),
  },
  /**
   * Relays: on-premise servers that lease a floating license's seats offline. The license service
   * signs their relay files and imports their signed usage reports into the sync reports stream.
   */
  relay: {
    createFile: defineMessage<CreateRelayFileMessage, RelayFileCreatedView>(
      'relay-file.create.v1',
      RelayFileCreatedView,
    ),
    listFiles: defineMessage<ListRelayFilesQueryDto, RelayFileListView>(
      'relay-file.list.v1',
      RelayFileListView,
    ),
    getFile: defineMessage<IdDto, RelayFileView>('relay-file.get.v1', RelayFileView),
    // Up to 10,000 leases, each stored in JetStream before the answer.
    importReport: defineMessage<ImportRelayReportDto, RelayReportImportView>(
      'relay-report.import.v1',
      RelayReportImportView,
      { minTimeoutMs: 30_000 },
    ),
  },
  revocation: {
    check: defineMessage<CheckRevocationDto, CheckRevocationView>('revocation.check.v1', CheckRevocationView),
    sync: defineMessage<SyncReportDto, SyncResultView>('revocation.sync.v1', SyncResultView),
    /**
     * The license service's writes to the cache, which the revocation service alone applies: a
     * write-through (the new status is in the cache before the change is answered) or a verify fill.
     */
    put: defineMessage<SerialStatusPutDto, OkReply>('revocation.cache.put.v1'),
  },
  analytics: {
    usage: defineMessage<UsageQueryDto, UsageView>('analytics.usage.v1', UsageView),
    features: defineMessage<AnalyticsRangeQueryDto, FeaturesView>('analytics.features.v1', FeaturesView),
    versions: defineMessage<AnalyticsRangeQueryDto, VersionsView>('analytics.versions.v1', VersionsView),
    licenseUsage: defineMessage<LicenseUsageRequest, LicenseUsageView>(
      'analytics.license-usage.v1',
      LicenseUsageView,
    ),
    active: defineMessage<ActiveQueryDto, ActiveView>('analytics.active.v1', ActiveView),
  },
  webhook: {
    create: defineMessage<CreateWebhookDto, WebhookCreatedView>('webhook.create.v1', WebhookCreatedView),
    list: defineMessage<PageQueryDto, WebhookListView>('webhook.list.v1', WebhookListView),
    get: defineMessage<IdDto, WebhookView>('webhook.get.v1', WebhookView),
    update: defineMessage<UpdateWebhookMessage, WebhookView>('webhook.update.v1', WebhookView),
    delete: defineMessage<IdDto, MessageView>('webhook.delete.v1', MessageView),
    rotateSecret: defineMessage<IdDto, WebhookSecretView>('webhook.rotate-secret.v1', WebhookSecretView),
    /** Queues a `webhook.test` event for the one endpoint, to be delivered at once. */
    test: defineMessage<IdDto, WebhookTestView>('webhook.test.v1', WebhookTestView),
    deliveries: defineMessage<ListDeliveriesMessage, DeliveryListView>(
      'webhook.deliveries.v1',
      DeliveryListView,
    ),
    /** One delivery, with the event's body as every attempt sends it. */
    delivery: defineMessage<IdDto, DeliveryDetailView>('webhook.delivery.v1', DeliveryDetailView),
    /** The delivery is attempted again at once, with a fresh budget of attempts. */
    redeliver: defineMessage<IdDto, DeliveryView>('webhook.redeliver.v1', DeliveryView),
  },
} as const;

/** A broadcast (no queue group, no reply): every subscriber receives it, every gateway replica included. */
export interface BroadcastDefinition<Payload> {
  readonly subject: string;
  readonly payload?: Payload;
}

export const Broadcasts = {
  /** An API key was revoked: every gateway drops it from its cache at once. */
  apiKeyRevoked: { subject: 'identity.api-key.revoked.v1' } as BroadcastDefinition<{ key_hash: string }>,
  /** A license token was revoked, or a machine token died with its activation: gateways drop it at once. */
  tokenRevoked: { subject: 'credential.token.revoked.v1' } as BroadcastDefinition<{ token_hash: string }>,
  /** An organization's response keys changed (a rotation): gateways read them again. */
  responseKeysChanged: { subject: 'identity.response-keys.changed.v1' } as BroadcastDefinition<{
    org_id: string;
  }>,
  /** An organization's settings changed: gateways read them again on the next request. */
  organizationChanged: { subject: 'identity.organization.changed.v1' } as BroadcastDefinition<{
    org_id: string;
  }>,
} as const;
