import { KeyObject, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { createActivationRelease, createActivationRequest } from '@licensing/license-verifier';
import { ApiClient, ApiResponse, segmentOf, waitFor } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, productWithKeyPair, uniqueCode } from './support/fixtures';
import { RouteKey, nestRoutes, openApiRoutes, withoutPrefix } from './support/routes';

/**
 * Access control, proven cell by cell over every route the running gateway serves. The route list
 * comes from the gateway itself (its OpenAPI document and its Nest router), so a route added to the
 * server and not to the tables below fails this suite until someone decides who may call it and
 * how it keeps organizations apart.
 */

type Scope = 'admin' | 'read' | 'client';
/** The keys each cell is tried with: one per scope, and one holding two (it may do what either may). */
const CALLERS: Record<string, readonly Scope[]> = {
  admin: ['admin'],
  read: ['read'],
  client: ['client'],
  'read+client': ['read', 'client'],
};
const mayCall = (allowed: readonly Scope[], caller: string): boolean =>
  CALLERS[caller]!.some((scope) => allowed.includes(scope));
const PREFIXES = ['/api/v1', '/v1'] as const;
const PUBLIC = 'public';

/**
 * Who may call each route. `public`: no API key needed (probes). Every API route lists `admin`,
 * which may call everything; the rest follows the scope table of docs/api.md.
 */
const SCOPE_TABLE: Record<RouteKey, readonly Scope[] | typeof PUBLIC> = {
  'GET /healthz': PUBLIC,
  'GET /readyz': PUBLIC,
  'GET /health/live': PUBLIC,
  'GET /health/ready': PUBLIC,

  'GET /products': ['admin', 'read'],
  'POST /products': ['admin'],
  'GET /products/{id}': ['admin', 'read'],
  'PUT /products/{id}': ['admin'],
  'DELETE /products/{id}': ['admin'],
  'GET /products/{id}/public-key': ['admin', 'read', 'client'],
  'GET /products/{id}/revocation-list': ['admin', 'read', 'client'],
  'GET /organizations/current/response-keys': ['admin', 'read', 'client'],
  'GET /organizations/current': ['admin', 'read'],
  'POST /organizations/current/response-keys': ['admin'],
  'POST /organizations/current/response-keys/{id}/activate': ['admin'],
  'DELETE /organizations/current/response-keys/{id}': ['admin'],
  'PATCH /organizations/current': ['admin'],

  'GET /licenses': ['admin', 'read'],
  'POST /licenses': ['admin'],
  'GET /licenses/{id}': ['admin', 'read'],
  'PATCH /licenses/{id}': ['admin'],
  'DELETE /licenses/{id}': ['admin'],
  'POST /licenses/{id}/check-in': ['admin', 'client'],
  'GET /licenses/{id}/download': ['admin', 'read'],
  'GET /licenses/{id}/usage': ['admin', 'read'],
  'POST /licenses/{id}/usage': ['admin', 'client'],
  'POST /licenses/{id}/checkout': ['admin', 'client'],
  'DELETE /licenses/{id}/usage': ['admin'],
  'POST /licenses/{id}/entitlements': ['admin'],
  'DELETE /licenses/{id}/entitlements': ['admin'],
  'POST /licenses/{id}/tokens': ['admin'],
  'GET /licenses/{id}/tokens': ['admin', 'read'],
  'DELETE /license-tokens/{id}': ['admin'],
  'POST /licenses/verify': ['admin', 'read', 'client'],
  'POST /licenses/check-revocation': ['admin', 'read', 'client'],
  'POST /licenses/sync': ['admin', 'client'],
  'POST /licenses/validate': ['admin', 'client'],
  'GET /licenses/events': ['admin', 'read', 'client'],

  'GET /activations': ['admin', 'read'],
  'POST /activations': ['admin', 'client'],
  'POST /activations/{id}/heartbeat': ['admin', 'client'],
  'POST /activations/{id}/checkout': ['admin', 'client'],
  'DELETE /activations/{id}': ['admin', 'client'],
  'POST /activations/{id}/processes': ['admin', 'client'],
  'GET /activations/{id}/processes': ['admin', 'read'],
  'POST /activations/{id}/processes/{process_id}/heartbeat': ['admin', 'client'],
  'DELETE /activations/{id}/processes/{process_id}': ['admin', 'client'],

  'GET /policies': ['admin', 'read'],
  'POST /policies': ['admin'],
  'GET /policies/{id}': ['admin', 'read'],
  'PATCH /policies/{id}': ['admin'],
  'DELETE /policies/{id}': ['admin'],
  'POST /activations/offline': ['admin', 'client'],
  'POST /activations/offline/release': ['admin', 'client'],

  'GET /analytics/usage': ['admin', 'read'],
  'GET /analytics/features': ['admin', 'read'],
  'GET /analytics/versions': ['admin', 'read'],
  'GET /analytics/active': ['admin', 'read'],

  'GET /entitlements': ['admin', 'read'],
  'POST /entitlements': ['admin'],
  'GET /entitlements/{id}': ['admin', 'read'],
  'PATCH /entitlements/{id}': ['admin'],
  'DELETE /entitlements/{id}': ['admin'],

  'GET /key-pairs': ['admin', 'read'],
  'POST /key-pairs': ['admin'],
  'GET /key-pairs/{id}': ['admin', 'read'],
  'DELETE /key-pairs/{id}': ['admin'],

  'GET /api-keys': ['admin', 'read'],
  'GET /api-keys/current': ['admin', 'read', 'client'],
  'POST /api-keys': ['admin'],
  'DELETE /api-keys/{id}': ['admin'],

  'GET /audit-events': ['admin'],

  'POST /licenses/{id}/relay-files': ['admin'],
  'GET /relay-files': ['admin', 'read'],
  'GET /relay-files/{id}': ['admin', 'read'],
  'POST /relay-reports': ['admin'],

  'GET /webhooks': ['admin'],
  'POST /webhooks': ['admin'],
  'GET /webhooks/{id}': ['admin'],
  'PUT /webhooks/{id}': ['admin'],
  'DELETE /webhooks/{id}': ['admin'],
  'POST /webhooks/{id}/rotate-secret': ['admin'],
  'POST /webhooks/{id}/test': ['admin'],
  'GET /webhooks/{id}/deliveries': ['admin'],
  'GET /webhook-deliveries/{id}': ['admin'],
  'POST /webhook-deliveries/{id}/redeliver': ['admin'],
};

interface Call {
  method: string;
  /** Without the /api/v1 or /v1 prefix; the query string included. */
  path: string;
  body?: unknown;
}

/** Where a request finds the resources it names: the long-lived ones, or new ones for a destructive call. */
interface Resources {
  product(): Promise<any>;
  license(): Promise<any>;
  keyPair(): Promise<any>;
  apiKey(): Promise<any>;
  activation(): Promise<any>;
  webhook(): Promise<any>;
  licenseToken(): Promise<any>;
  entitlement(): Promise<any>;
  policy(): Promise<any>;
  /** A process of the world's activation. */
  process(): Promise<any>;
  /** A response key of org A (a `next` one, fresh). */
  responseKey(): Promise<{ kid: string }>;
  /** Org A's admin, for the setup a request needs. */
  admin(): ApiClient;
  /** New resources may be made: false for calls that must change nothing. */
  fresh: boolean;
}

/** Org A's long-lived resources, the ones the matrices read, attack and compare. */
interface World {
  keyPair: any;
  product: any;
  license: any;
  activation: any;
  apiKey: any;
  webhook: any;
  licenseToken: any;
  entitlement: any;
  policy: any;
  process: any;
  /** Org A's active response key. */
  responseKey: { kid: string };
  /** A delivery of `webhook` (its test event). */
  delivery: { id: string };
  range: string;
  /** A relay file of `license` (floating), and the relay's private key, which signs its reports. */
  relayFile: { id: string; site: string };
  relayKey: KeyObject;
  /** A report of `relayFile` with one lease, signed by `relayKey`. */
  relayReport: string;
}

/** For each route, a request that a caller allowed to make it gets a 2xx for (RouteKey's method + template). */
const REQUESTS: Record<RouteKey, (w: World, r: Resources) => Promise<Omit<Call, 'method'>>> = {
  'GET /healthz': async () => ({ path: '/healthz' }),
  'GET /readyz': async () => ({ path: '/readyz' }),
  'GET /health/live': async () => ({ path: '/health/live' }),
  'GET /health/ready': async () => ({ path: '/health/ready' }),

  'GET /products': async () => ({ path: '/products' }),
  'POST /products': async (w) => ({
    path: '/products',
    body: { name: 'Matrix', code: uniqueCode('mx'), key_pair_id: w.keyPair.id },
  }),
  'GET /products/{id}': async (w) => ({ path: `/products/${w.product.id}` }),
  'PUT /products/{id}': async (_w, r) => ({
    path: `/products/${(await r.product()).id}`,
    body: { name: 'Renamed' },
  }),
  'DELETE /products/{id}': async (_w, r) => ({ path: `/products/${(await r.product()).id}` }),
  'GET /products/{id}/public-key': async (w) => ({ path: `/products/${w.product.id}/public-key` }),
  'GET /products/{id}/revocation-list': async (w) => ({ path: `/products/${w.product.id}/revocation-list` }),
  'GET /organizations/current/response-keys': async () => ({ path: '/organizations/current/response-keys' }),
  'GET /organizations/current': async () => ({ path: '/organizations/current' }),
  'POST /organizations/current/response-keys': async (_w, r) => {
    if (r.fresh) await withoutNextResponseKey(r.admin());
    return { path: '/organizations/current/response-keys' };
  },
  'POST /organizations/current/response-keys/{id}/activate': async (_w, r) => ({
    path: `/organizations/current/response-keys/${(await r.responseKey()).kid}/activate`,
  }),
  'DELETE /organizations/current/response-keys/{id}': async (_w, r) => ({
    path: `/organizations/current/response-keys/${(await r.responseKey()).kid}`,
  }),
  'PATCH /organizations/current': async () => ({
    path: '/organizations/current',
    body: { checkout_ttl_seconds: 2_592_000 },
  }),

  'GET /licenses': async (w) => ({ path: `/licenses?product_id=${w.product.id}` }),
  'POST /licenses': async (w) => ({ path: '/licenses', body: { product_id: w.product.id } }),
  'GET /licenses/{id}': async (w) => ({ path: `/licenses/${w.license.id}` }),
  'PATCH /licenses/{id}': async (_w, r) => ({
    path: `/licenses/${(await r.license()).id}`,
    body: { customer_id: 'cus_matrix' },
  }),
  'DELETE /licenses/{id}': async (_w, r) => ({ path: `/licenses/${(await r.license()).id}` }),
  'POST /licenses/{id}/check-in': async (w) => ({ path: `/licenses/${w.license.id}/check-in` }),
  'GET /licenses/{id}/download': async (w) => ({ path: `/licenses/${w.license.id}/download` }),
  'GET /licenses/{id}/usage': async (w) => ({ path: `/licenses/${w.license.id}/usage` }),
  'POST /licenses/{id}/usage': async (_w, r) => ({
    path: `/licenses/${(await r.license()).id}/usage`,
    body: { increment: 1 },
  }),
  'DELETE /licenses/{id}/usage': async (_w, r) => ({ path: `/licenses/${(await r.license()).id}/usage` }),
  'POST /licenses/{id}/checkout': async (w) => ({
    path: `/licenses/${w.license.id}/checkout`,
    body: { ttl_seconds: 3_600 },
  }),
  'POST /licenses/{id}/entitlements': async (w, r) => ({
    path: `/licenses/${(await r.license()).id}/entitlements`,
    body: { codes: [w.entitlement.code] },
  }),
  'DELETE /licenses/{id}/entitlements': async (w, r) => ({
    path: `/licenses/${(await r.license()).id}/entitlements`,
    body: { codes: [w.entitlement.code] },
  }),
  'POST /licenses/{id}/tokens': async (w) => ({
    path: `/licenses/${w.license.id}/tokens`,
    body: { name: 'matrix' },
  }),
  'GET /licenses/{id}/tokens': async (w) => ({ path: `/licenses/${w.license.id}/tokens` }),
  'DELETE /license-tokens/{id}': async (_w, r) => ({
    path: `/license-tokens/${(await r.licenseToken()).id}`,
  }),
  'POST /licenses/verify': async (w) => ({
    path: '/licenses/verify',
    body: { license_blob: w.license.license_blob, product_id: w.product.id },
  }),
  'POST /licenses/check-revocation': async (w) => ({
    path: '/licenses/check-revocation',
    body: { serials: [w.license.serial] },
  }),
  'POST /licenses/sync': async (_w, r) => ({
    path: '/licenses/sync',
    body: { license_serial: (await r.license()).serial, app_version: '9.9.9' },
  }),
  'POST /licenses/validate': async (w) => ({ path: '/licenses/validate', body: { key: w.license.serial } }),
  'GET /licenses/events': async (w) => ({ path: `/licenses/events?serials=${w.license.serial}` }),

  'GET /activations': async (w) => ({ path: `/activations?license_id=${w.license.id}` }),
  'POST /activations': async (_w, r) => ({
    path: '/activations',
    body: { license_id: (await r.license()).id, fingerprint: `fp-${randomUUID()}` },
  }),
  'POST /activations/{id}/heartbeat': async (w) => ({ path: `/activations/${w.activation.id}/heartbeat` }),
  'POST /activations/{id}/checkout': async (w) => ({
    path: `/activations/${w.activation.id}/checkout`,
    body: {},
  }),
  'DELETE /activations/{id}': async (_w, r) => ({ path: `/activations/${(await r.activation()).id}` }),
  'POST /activations/{id}/processes': async (w) => ({
    path: `/activations/${w.activation.id}/processes`,
    body: { pid: Math.floor(Math.random() * 1_000_000) },
  }),
  'GET /activations/{id}/processes': async (w) => ({ path: `/activations/${w.activation.id}/processes` }),
  'POST /activations/{id}/processes/{process_id}/heartbeat': async (w) => ({
    path: `/activations/${w.activation.id}/processes/${w.process.id}/heartbeat`,
  }),
  'DELETE /activations/{id}/processes/{process_id}': async (_w, r) => {
    const process = await r.process();
    return { path: `/activations/${process.activation_id}/processes/${process.id}` };
  },

  'GET /policies': async (w) => ({ path: `/policies?product_id=${w.product.id}` }),
  'POST /policies': async (w) => ({ path: '/policies', body: { product_id: w.product.id, name: 'Matrix' } }),
  'GET /policies/{id}': async (w) => ({ path: `/policies/${w.policy.id}` }),
  'PATCH /policies/{id}': async (_w, r) => ({
    path: `/policies/${(await r.policy()).id}`,
    body: { name: 'Renamed' },
  }),
  'DELETE /policies/{id}': async (_w, r) => ({ path: `/policies/${(await r.policy()).id}` }),
  'POST /activations/offline': async (_w, r) => ({
    path: '/activations/offline',
    body: { request: (await offlineRequest((await r.license()).serial)).request },
  }),
  'POST /activations/offline/release': async (_w, r) => ({
    path: '/activations/offline/release',
    body: { release: await offlineRelease(r) },
  }),

  'GET /analytics/usage': async (w) => ({ path: `/analytics/usage?${w.range}` }),
  'GET /analytics/features': async (w) => ({ path: `/analytics/features?${w.range}` }),
  'GET /analytics/versions': async (w) => ({ path: `/analytics/versions?${w.range}` }),
  'GET /analytics/active': async () => ({ path: '/analytics/active?window=7d' }),

  'GET /entitlements': async () => ({ path: '/entitlements' }),
  'POST /entitlements': async () => ({
    path: '/entitlements',
    body: { code: uniqueCode('ent'), name: 'Matrix' },
  }),
  'GET /entitlements/{id}': async (w) => ({ path: `/entitlements/${w.entitlement.id}` }),
  'PATCH /entitlements/{id}': async (_w, r) => ({
    path: `/entitlements/${(await r.entitlement()).id}`,
    body: { name: 'Renamed' },
  }),
  'DELETE /entitlements/{id}': async (_w, r) => ({ path: `/entitlements/${(await r.entitlement()).id}` }),

  'GET /key-pairs': async () => ({ path: '/key-pairs' }),
  'POST /key-pairs': async () => ({ path: '/key-pairs', body: { algorithm: 'ed25519' } }),
  'GET /key-pairs/{id}': async (w) => ({ path: `/key-pairs/${w.keyPair.id}` }),
  'DELETE /key-pairs/{id}': async (_w, r) => ({ path: `/key-pairs/${(await r.keyPair()).id}` }),

  'GET /api-keys': async () => ({ path: '/api-keys' }),
  'GET /api-keys/current': async () => ({ path: '/api-keys/current' }),
  'POST /api-keys': async () => ({ path: '/api-keys', body: { name: 'matrix', scopes: ['read'] } }),
  'DELETE /api-keys/{id}': async (_w, r) => ({ path: `/api-keys/${(await r.apiKey()).id}` }),

  'GET /audit-events': async () => ({ path: '/audit-events' }),

  'POST /licenses/{id}/relay-files': async (w) => ({
    path: `/licenses/${w.license.id}/relay-files`,
    body: { site: 'matrix', public_key: relayKeyPair().publicPem },
  }),
  'GET /relay-files': async (w) => ({ path: `/relay-files?license_id=${w.license.id}` }),
  'GET /relay-files/{id}': async (w) => ({ path: `/relay-files/${w.relayFile.id}` }),
  'POST /relay-reports': async (w) => ({
    path: '/relay-reports',
    body: { report: relayReport(w.relayKey, w.relayFile, w.license.serial, w.product.id) },
  }),

  'GET /webhooks': async () => ({ path: '/webhooks' }),
  'POST /webhooks': async () => ({ path: '/webhooks', body: { url: WEBHOOK_URL, events: ['*'] } }),
  'GET /webhooks/{id}': async (w) => ({ path: `/webhooks/${w.webhook.id}` }),
  'PUT /webhooks/{id}': async (_w, r) => ({
    path: `/webhooks/${(await r.webhook()).id}`,
    body: { description: 'renamed' },
  }),
  'DELETE /webhooks/{id}': async (_w, r) => ({ path: `/webhooks/${(await r.webhook()).id}` }),
  'POST /webhooks/{id}/rotate-secret': async (_w, r) => ({
    path: `/webhooks/${(await r.webhook()).id}/rotate-secret`,
  }),
  'POST /webhooks/{id}/test': async (_w, r) => ({ path: `/webhooks/${(await r.webhook()).id}/test` }),
  'GET /webhooks/{id}/deliveries': async (w) => ({ path: `/webhooks/${w.webhook.id}/deliveries` }),
  'GET /webhook-deliveries/{id}': async (w) => ({ path: `/webhook-deliveries/${w.delivery.id}` }),
  'POST /webhook-deliveries/{id}/redeliver': async (w) => ({
    path: `/webhook-deliveries/${w.delivery.id}/redeliver`,
  }),
};

/**
 * Organization B's admin naming organization A's resources. Either a case (the request, and what
 * the contract answers: a 404, an empty list, `not_found` entries, `NOT_FOUND`) or the reason the
 * route names nothing that belongs to an organization. A route with a path parameter must have a case.
 */
interface TenancyCase {
  call: (w: World) => Call;
  expect: (response: ApiResponse, w: World) => void;
}
type Tenancy = TenancyCase | { none: string };

const notFound = (response: ApiResponse): void => {
  expect(response.status).toBe(404);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status: 404, code: 'not_found' });
};
const emptyList = (member: string) => (response: ApiResponse) => {
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({ [member]: [], total: 0 });
};
/** An unfiltered list of B's own: none of A's ids appear in it. */
const noneOfA = (member: string, ids: (w: World) => string[]) => (response: ApiResponse, w: World) => {
  expect(response.status).toBe(200);
  const listed = (response.body[member] as { id: string }[]).map((item) => item.id);
  for (const id of ids(w)) expect(listed).not.toContain(id);
};

const TENANCY: Record<RouteKey, Tenancy> = {
  'GET /healthz': { none: 'a public probe that names no resource' },
  'GET /readyz': { none: 'a public probe that names no resource' },
  'GET /health/live': { none: 'a public probe that names no resource' },
  'GET /health/ready': { none: 'a public probe that names no resource' },

  'GET /products': {
    call: () => ({ method: 'GET', path: '/products?per_page=100' }),
    expect: noneOfA('products', (w) => [w.product.id]),
  },
  'POST /products': {
    call: (w) => ({
      method: 'POST',
      path: '/products',
      body: { name: 'Stolen key', code: uniqueCode('steal'), key_pair_id: w.keyPair.id },
    }),
    expect: notFound,
  },
  'GET /products/{id}': {
    call: (w) => ({ method: 'GET', path: `/products/${w.product.id}` }),
    expect: notFound,
  },
  'PUT /products/{id}': {
    call: (w) => ({ method: 'PUT', path: `/products/${w.product.id}`, body: { name: 'Hijacked' } }),
    expect: notFound,
  },
  'DELETE /products/{id}': {
    call: (w) => ({ method: 'DELETE', path: `/products/${w.product.id}` }),
    expect: notFound,
  },
  'GET /products/{id}/public-key': {
    call: (w) => ({ method: 'GET', path: `/products/${w.product.id}/public-key` }),
    expect: notFound,
  },
  'GET /products/{id}/revocation-list': {
    call: (w) => ({ method: 'GET', path: `/products/${w.product.id}/revocation-list` }),
    expect: notFound,
  },
  'GET /organizations/current/response-keys': {
    none: "names the caller's own organization (`current`), never another's",
  },
  'GET /organizations/current': { none: "names the caller's own organization (`current`), never another's" },
  'POST /organizations/current/response-keys': {
    none: "creates a key of the caller's own organization (`current`); names no resource",
  },
  'POST /organizations/current/response-keys/{id}/activate': {
    call: (w) => ({
      method: 'POST',
      path: `/organizations/current/response-keys/${w.responseKey.kid}/activate`,
    }),
    expect: notFound,
  },
  'DELETE /organizations/current/response-keys/{id}': {
    call: (w) => ({ method: 'DELETE', path: `/organizations/current/response-keys/${w.responseKey.kid}` }),
    expect: notFound,
  },
  'PATCH /organizations/current': {
    none: "names the caller's own organization (`current`), never another's",
  },

  'GET /licenses': {
    call: (w) => ({ method: 'GET', path: `/licenses?product_id=${w.product.id}` }),
    expect: emptyList('licenses'),
  },
  'POST /licenses': {
    call: (w) => ({ method: 'POST', path: '/licenses', body: { product_id: w.product.id } }),
    expect: notFound,
  },
  'POST /licenses/{id}/check-in': {
    call: (w) => ({ method: 'POST', path: `/licenses/${w.license.id}/check-in` }),
    expect: notFound,
  },
  'GET /licenses/{id}': {
    call: (w) => ({ method: 'GET', path: `/licenses/${w.license.id}` }),
    expect: notFound,
  },
  'PATCH /licenses/{id}': {
    call: (w) => ({
      method: 'PATCH',
      path: `/licenses/${w.license.id}`,
      body: { status: 'suspended', features: ['stolen'] },
    }),
    expect: notFound,
  },
  'DELETE /licenses/{id}': {
    call: (w) => ({ method: 'DELETE', path: `/licenses/${w.license.id}` }),
    expect: notFound,
  },
  'GET /licenses/{id}/download': {
    call: (w) => ({ method: 'GET', path: `/licenses/${w.license.id}/download` }),
    expect: notFound,
  },
  'GET /licenses/{id}/usage': {
    call: (w) => ({ method: 'GET', path: `/licenses/${w.license.id}/usage` }),
    expect: notFound,
  },
  'POST /licenses/{id}/usage': {
    call: (w) => ({ method: 'POST', path: `/licenses/${w.license.id}/usage`, body: { increment: 1 } }),
    expect: notFound,
  },
  'DELETE /licenses/{id}/usage': {
    call: (w) => ({ method: 'DELETE', path: `/licenses/${w.license.id}/usage` }),
    expect: notFound,
  },
  'POST /licenses/{id}/checkout': {
    call: (w) => ({ method: 'POST', path: `/licenses/${w.license.id}/checkout`, body: {} }),
    expect: notFound,
  },
  'POST /licenses/{id}/entitlements': {
    call: (w) => ({
      method: 'POST',
      path: `/licenses/${w.license.id}/entitlements`,
      body: { codes: [w.entitlement.code] },
    }),
    expect: notFound,
  },
  'DELETE /licenses/{id}/entitlements': {
    call: (w) => ({
      method: 'DELETE',
      path: `/licenses/${w.license.id}/entitlements`,
      body: { codes: [w.entitlement.code] },
    }),
    expect: notFound,
  },
  'POST /licenses/{id}/tokens': {
    call: (w) => ({ method: 'POST', path: `/licenses/${w.license.id}/tokens`, body: { name: 'stolen' } }),
    expect: notFound,
  },
  'GET /licenses/{id}/tokens': {
    call: (w) => ({ method: 'GET', path: `/licenses/${w.license.id}/tokens` }),
    expect: notFound,
  },
  'DELETE /license-tokens/{id}': {
    call: (w) => ({ method: 'DELETE', path: `/license-tokens/${w.licenseToken.id}` }),
    expect: notFound,
  },
  'POST /licenses/verify': {
    call: (w) => ({
      method: 'POST',
      path: '/licenses/verify',
      body: { license_blob: w.license.license_blob, product_id: w.product.id },
    }),
    expect: notFound,
  },
  'POST /licenses/check-revocation': {
    call: (w) => ({
      method: 'POST',
      path: '/licenses/check-revocation',
      body: { serials: [w.license.serial] },
    }),
    expect: (response, w) => {
      expect(response.status).toBe(200);
      expect(response.body.results).toEqual([
        { serial: w.license.serial, status: 'not_found', revoked_at: null },
      ]);
    },
  },
  'POST /licenses/sync': {
    call: (w) => ({
      method: 'POST',
      path: '/licenses/sync',
      body: { license_serial: w.license.serial, app_version: '6.6.6', seats_in_use: 1 },
    }),
    expect: (response) => {
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: 'not_found' });
    },
  },
  'GET /licenses/events': {
    none: "follows serials of the caller's organization only; push-revocation.e2e-spec.ts proves B never hears of A's",
  },
  'POST /licenses/validate': {
    call: (w) => ({ method: 'POST', path: '/licenses/validate', body: { key: w.license.serial } }),
    expect: (response) => {
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        valid: false,
        code: 'NOT_FOUND',
        license: null,
        activation: null,
      });
    },
  },

  'GET /activations': {
    call: (w) => ({ method: 'GET', path: `/activations?license_id=${w.license.id}` }),
    expect: emptyList('activations'),
  },
  'POST /activations': {
    call: (w) => ({
      method: 'POST',
      path: '/activations',
      body: { license_id: w.license.id, fingerprint: 'fp-intruder' },
    }),
    expect: notFound,
  },
  'POST /activations/{id}/heartbeat': {
    call: (w) => ({ method: 'POST', path: `/activations/${w.activation.id}/heartbeat` }),
    expect: notFound,
  },
  'POST /activations/{id}/checkout': {
    call: (w) => ({ method: 'POST', path: `/activations/${w.activation.id}/checkout`, body: {} }),
    expect: notFound,
  },
  'POST /activations/offline': {
    none: "the request file names a serial, looked up in the caller's organization as POST /activations does (its case)",
  },
  'POST /activations/offline/release': {
    none: "a release names an activation id, looked up in the caller's organization; proven in offline-activation.e2e-spec.ts",
  },
  'DELETE /activations/{id}': {
    call: (w) => ({ method: 'DELETE', path: `/activations/${w.activation.id}` }),
    expect: notFound,
  },
  'POST /activations/{id}/processes': {
    call: (w) => ({ method: 'POST', path: `/activations/${w.activation.id}/processes`, body: { pid: 1 } }),
    expect: notFound,
  },
  'GET /activations/{id}/processes': {
    call: (w) => ({ method: 'GET', path: `/activations/${w.activation.id}/processes` }),
    expect: notFound,
  },
  'POST /activations/{id}/processes/{process_id}/heartbeat': {
    call: (w) => ({
      method: 'POST',
      path: `/activations/${w.activation.id}/processes/${w.process.id}/heartbeat`,
    }),
    expect: notFound,
  },
  'DELETE /activations/{id}/processes/{process_id}': {
    call: (w) => ({ method: 'DELETE', path: `/activations/${w.activation.id}/processes/${w.process.id}` }),
    expect: notFound,
  },

  'GET /policies': {
    call: (w) => ({ method: 'GET', path: `/policies?product_id=${w.product.id}` }),
    expect: emptyList('policies'),
  },
  'POST /policies': {
    call: (w) => ({ method: 'POST', path: '/policies', body: { product_id: w.product.id, name: 'Stolen' } }),
    expect: notFound,
  },
  'GET /policies/{id}': {
    call: (w) => ({ method: 'GET', path: `/policies/${w.policy.id}` }),
    expect: notFound,
  },
  'PATCH /policies/{id}': {
    call: (w) => ({ method: 'PATCH', path: `/policies/${w.policy.id}`, body: { name: 'Hijacked' } }),
    expect: notFound,
  },
  'DELETE /policies/{id}': {
    call: (w) => ({ method: 'DELETE', path: `/policies/${w.policy.id}` }),
    expect: notFound,
  },

  'GET /analytics/usage': {
    call: (w) => ({ method: 'GET', path: `/analytics/usage?${w.range}&product_id=${w.product.id}` }),
    expect: emptyList('buckets'),
  },
  'GET /analytics/features': {
    call: (w) => ({ method: 'GET', path: `/analytics/features?${w.range}&product_id=${w.product.id}` }),
    expect: emptyList('features'),
  },
  'GET /analytics/versions': {
    call: (w) => ({ method: 'GET', path: `/analytics/versions?${w.range}&product_id=${w.product.id}` }),
    expect: emptyList('versions'),
  },
  'GET /analytics/active': {
    call: (w) => ({ method: 'GET', path: `/analytics/active?window=30d&product_id=${w.product.id}` }),
    expect: (response: ApiResponse) => {
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ window: '30d', licenses: 0, machines: 0 });
    },
  },

  'GET /entitlements': {
    call: () => ({ method: 'GET', path: '/entitlements?per_page=100' }),
    expect: noneOfA('entitlements', (w) => [w.entitlement.id]),
  },
  'POST /entitlements': { none: "adds to the caller's own catalog; the body names no resource" },
  'GET /entitlements/{id}': {
    call: (w) => ({ method: 'GET', path: `/entitlements/${w.entitlement.id}` }),
    expect: notFound,
  },
  'PATCH /entitlements/{id}': {
    call: (w) => ({ method: 'PATCH', path: `/entitlements/${w.entitlement.id}`, body: { name: 'Hijacked' } }),
    expect: notFound,
  },
  'DELETE /entitlements/{id}': {
    call: (w) => ({ method: 'DELETE', path: `/entitlements/${w.entitlement.id}` }),
    expect: notFound,
  },

  'GET /key-pairs': {
    call: () => ({ method: 'GET', path: '/key-pairs?per_page=100' }),
    expect: noneOfA('key_pairs', (w) => [w.keyPair.id]),
  },
  'POST /key-pairs': { none: 'generates a key pair of the caller; the body names no resource' },
  'GET /key-pairs/{id}': {
    call: (w) => ({ method: 'GET', path: `/key-pairs/${w.keyPair.id}` }),
    expect: notFound,
  },
  'DELETE /key-pairs/{id}': {
    call: (w) => ({ method: 'DELETE', path: `/key-pairs/${w.keyPair.id}` }),
    expect: notFound,
  },

  'GET /api-keys': {
    call: () => ({ method: 'GET', path: '/api-keys?per_page=100' }),
    expect: noneOfA('api_keys', (w) => [w.apiKey.id]),
  },
  'GET /api-keys/current': { none: "describes the caller's own key; names no resource" },
  'POST /api-keys': { none: 'issues a key of the caller; the body names no resource' },
  'DELETE /api-keys/{id}': {
    call: (w) => ({ method: 'DELETE', path: `/api-keys/${w.apiKey.id}` }),
    expect: notFound,
  },

  'GET /audit-events': {
    call: (w) => ({ method: 'GET', path: `/audit-events?resource_id=${w.license.id}` }),
    expect: emptyList('audit_events'),
  },

  'POST /licenses/{id}/relay-files': {
    call: (w) => ({
      method: 'POST',
      path: `/licenses/${w.license.id}/relay-files`,
      body: { site: 'stolen', public_key: relayKeyPair().publicPem },
    }),
    expect: notFound,
  },
  'GET /relay-files': {
    call: (w) => ({ method: 'GET', path: `/relay-files?license_id=${w.license.id}` }),
    expect: emptyList('relay_files'),
  },
  'GET /relay-files/{id}': {
    call: (w) => ({ method: 'GET', path: `/relay-files/${w.relayFile.id}` }),
    expect: notFound,
  },
  'POST /relay-reports': {
    call: (w) => ({ method: 'POST', path: '/relay-reports', body: { report: w.relayReport } }),
    expect: notFound,
  },

  'GET /webhooks': {
    call: () => ({ method: 'GET', path: '/webhooks?per_page=100' }),
    expect: noneOfA('webhooks', (w) => [w.webhook.id]),
  },
  'POST /webhooks': { none: "subscribes an endpoint of the caller's; the body names no resource" },
  'GET /webhooks/{id}': {
    call: (w) => ({ method: 'GET', path: `/webhooks/${w.webhook.id}` }),
    expect: notFound,
  },
  'PUT /webhooks/{id}': {
    call: (w) => ({
      method: 'PUT',
      path: `/webhooks/${w.webhook.id}`,
      body: { url: 'https://attacker.example.test/steal', events: ['*'] },
    }),
    expect: notFound,
  },
  'DELETE /webhooks/{id}': {
    call: (w) => ({ method: 'DELETE', path: `/webhooks/${w.webhook.id}` }),
    expect: notFound,
  },
  'POST /webhooks/{id}/rotate-secret': {
    call: (w) => ({ method: 'POST', path: `/webhooks/${w.webhook.id}/rotate-secret` }),
    expect: notFound,
  },
  'POST /webhooks/{id}/test': {
    call: (w) => ({ method: 'POST', path: `/webhooks/${w.webhook.id}/test` }),
    expect: notFound,
  },
  'GET /webhooks/{id}/deliveries': {
    call: (w) => ({ method: 'GET', path: `/webhooks/${w.webhook.id}/deliveries` }),
    expect: notFound,
  },
  'GET /webhook-deliveries/{id}': {
    call: (w) => ({ method: 'GET', path: `/webhook-deliveries/${w.delivery.id}` }),
    expect: notFound,
  },
  'POST /webhook-deliveries/{id}/redeliver': {
    call: (w) => ({ method: 'POST', path: `/webhook-deliveries/${w.delivery.id}/redeliver` }),
    expect: notFound,
  },
};

/** An air-gapped machine's activation request for `serial`, made as the SDK makes it. */
const offlineRequest = (serial: string) =>
  createActivationRequest({ licenseKey: serial, fingerprint: `fp-${randomUUID()}` });

/**
 * The release of a fresh offline activation of org A, signed by its machine key; for a call that
 * must change nothing (a refused scope), a release of nothing.
 */
async function offlineRelease(r: Resources): Promise<string> {
  if (!r.fresh) return 'eyJhbGciOiJFZERTQSJ9.e30.c2ln';
  const { serial } = await r.license();
  const request = await offlineRequest(serial);
  const activated = await r.admin().post('/api/v1/activations/offline', { request: request.request });
  expect(activated.status).toBe(201);
  return createActivationRelease(activated.body.activation_file, request.machineKey);
}

/** Deletes org A's `next` response key, if it has one: there is one at a time. */
async function withoutNextResponseKey(admin: ApiClient): Promise<void> {
  const { keys } = (await admin.get('/api/v1/organizations/current/response-keys')).body as {
    keys: { kid: string; status: string }[];
  };
  for (const key of keys.filter((k) => k.status === 'next')) {
    expect((await admin.delete(`/api/v1/organizations/current/response-keys/${key.kid}`)).status).toBe(200);
  }
}

/** A relay's Ed25519 key pair, the public key as a PEM SPKI block (as its relay request holds it). */
function relayKeyPair(): { privateKey: KeyObject; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** A relay report of one new lease, signed as the relay signs it. */
function relayReport(
  privateKey: KeyObject,
  file: { id: string; site: string },
  serial: string,
  productId: string,
) {
  const header = segmentOf({ alg: 'EdDSA', typ: 'relay-report+jws', kid: file.id });
  const payload = segmentOf({
    v: 1,
    kind: 'relay_report',
    report_id: randomUUID(),
    relay_file_id: file.id,
    site: file.site,
    serial,
    product_id: productId,
    created_at: new Date().toISOString(),
    leases: [
      {
        id: randomUUID(),
        fingerprint: 'fp-relay',
        leased_at: new Date().toISOString(),
        ended_at: null,
        seats_in_use: 1,
      },
    ],
  });
  return `${header}.${payload}.${sign(null, Buffer.from(`${header}.${payload}`), privateKey).toString('base64url')}`;
}

/** Where the matrices' webhooks point: a host that does not resolve here, so nothing is ever sent. */
const WEBHOOK_URL = 'https://hooks.example.test/matrix';

describe('access matrices over every route the gateway serves', () => {
  let stack: TestStack;
  let orgA: TestOrganization;
  let orgB: TestOrganization;
  let clientsA: Record<string, ApiClient>;
  let world: World;
  /** Every route the server serves, without its prefix, each checked to exist under both prefixes. */
  let served: RouteKey[];

  /** New resources of org A, made by its admin, for the calls that destroy what they name. */
  const fresh: Resources = {
    product: async () => (await productWithKeyPair(orgA.api)).product,
    license: () => createLicense(orgA.api, { product_id: world.product.id, max_seats: 10 }),
    keyPair: async () => {
      const created = await orgA.api.post('/api/v1/key-pairs', { algorithm: 'ed25519' });
      expect(created.status).toBe(201);
      return created.body;
    },
    apiKey: async () => (await apiKeyWithScopes(orgA.api, ['read'], 'to be revoked')).key,
    activation: async () => {
      const created = await orgA.api.post('/api/v1/activations', {
        license_id: world.license.id,
        fingerprint: `fp-${randomUUID()}`,
      });
      expect(created.status).toBe(201);
      return created.body;
    },
    webhook: async () => {
      const created = await orgA.api.post('/api/v1/webhooks', { url: WEBHOOK_URL, events: ['*'] });
      expect(created.status).toBe(201);
      return created.body;
    },
    licenseToken: async () => {
      const created = await orgA.api.post(`/api/v1/licenses/${world.license.id}/tokens`, {});
      expect(created.status).toBe(201);
      return created.body;
    },
    entitlement: async () => {
      const created = await orgA.api.post('/api/v1/entitlements', { code: uniqueCode('ent'), name: 'Fresh' });
      expect(created.status).toBe(201);
      return created.body;
    },
    policy: async () => {
      const created = await orgA.api.post('/api/v1/policies', {
        product_id: world.product.id,
        name: 'Fresh',
      });
      expect(created.status).toBe(201);
      return created.body;
    },
    process: async () => {
      const created = await orgA.api.post(`/api/v1/activations/${world.activation.id}/processes`, {
        pid: Math.floor(Math.random() * 1_000_000),
      });
      expect(created.status).toBe(201);
      return created.body;
    },
    responseKey: async () => {
      await withoutNextResponseKey(orgA.api);
      const created = await orgA.api.post('/api/v1/organizations/current/response-keys');
      expect(created.status).toBe(201);
      return created.body;
    },
    admin: () => orgA.api,
    fresh: true,
  };
  /** Org A's long-lived resources, for calls whose effect must be nil (a refused scope). */
  const existing: Resources = {
    product: async () => world.product,
    license: async () => world.license,
    keyPair: async () => world.keyPair,
    apiKey: async () => world.apiKey,
    activation: async () => world.activation,
    webhook: async () => world.webhook,
    licenseToken: async () => world.licenseToken,
    entitlement: async () => world.entitlement,
    policy: async () => world.policy,
    process: async () => world.process,
    responseKey: async () => world.responseKey,
    admin: () => orgA.api,
    fresh: false,
  };

  /** Everything org A can see of itself, read with its admin key (per_page 100 holds it all). */
  async function stateOfA(): Promise<Record<string, unknown>> {
    const paths = [
      '/api/v1/products?per_page=100',
      '/api/v1/licenses?per_page=100',
      '/api/v1/key-pairs?per_page=100',
      '/api/v1/api-keys?per_page=100',
      '/api/v1/activations?per_page=100',
      '/api/v1/webhooks?per_page=100',
      '/api/v1/entitlements?per_page=100',
      `/api/v1/entitlements/${world.entitlement.id}`,
      '/api/v1/policies?per_page=100',
      `/api/v1/activations/${world.activation.id}/processes?per_page=100`,
      `/api/v1/webhooks/${world.webhook.id}`,
      `/api/v1/products/${world.product.id}`,
      `/api/v1/products/${world.product.id}/public-key`,
      `/api/v1/licenses/${world.license.id}`,
      `/api/v1/key-pairs/${world.keyPair.id}`,
      `/api/v1/licenses/${world.license.id}/usage`,
      `/api/v1/licenses/${world.license.id}/tokens?per_page=100`,
      '/api/v1/relay-files?per_page=100',
      '/api/v1/organizations/current',
      `/api/v1/analytics/usage?${world.range}`,
      `/api/v1/analytics/features?${world.range}`,
      `/api/v1/analytics/versions?${world.range}`,
    ];
    const answers = await Promise.all(paths.map((path) => orgA.api.get(path)));
    answers.forEach((answer, i) =>
      expect({ path: paths[i], status: answer.status }).toEqual({ path: paths[i], status: 200 }),
    );
    return Object.fromEntries(answers.map((answer, i) => [paths[i], answer.body]));
  }

  const syncsOf = async (licenseId: string): Promise<number> =>
    (await orgA.api.get(`/api/v1/licenses/${licenseId}/usage`)).body.syncs as number;

  /**
   * Usage is counted about a second after a sync. To prove that refused or foreign syncs stored no
   * report, A sends one marker report afterwards and waits for it: once it is counted, anything
   * sent before it would have been counted too, so the count must have grown by exactly one.
   */
  async function expectNoReportStoredSince(before: number): Promise<void> {
    const marker = await clientsA.client.post('/api/v1/licenses/sync', {
      license_serial: world.license.serial,
    });
    expect(marker.status).toBe(200);
    await waitFor(async () => (await syncsOf(world.license.id)) >= before + 1, { what: 'the marker report' });
    expect(await syncsOf(world.license.id)).toBe(before + 1);
  }

  beforeAll(async () => {
    stack = await startStack();
    [orgA, orgB] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    const [read, client, both] = await Promise.all([
      apiKeyWithScopes(orgA.api, ['read']),
      apiKeyWithScopes(orgA.api, ['client']),
      apiKeyWithScopes(orgA.api, ['read', 'client']),
    ]);
    clientsA = { admin: orgA.api, read: read.api, client: client.api, 'read+client': both.api };
    const { product, keyPair } = await productWithKeyPair(orgA.api, { default_features: ['pro'] });
    // Floating, so that it can have a relay file.
    const license = await createLicense(orgA.api, {
      product_id: product.id,
      max_seats: 100,
      license_type: 'floating',
    });
    const activation = await orgA.api.post('/api/v1/activations', {
      license_id: license.id,
      fingerprint: 'fp-a',
    });
    expect(activation.status).toBe(201);
    const day = 86_400_000;
    const webhook = await orgA.api.post('/api/v1/webhooks', {
      url: WEBHOOK_URL,
      events: ['webhook.disabled'],
    });
    expect(webhook.status).toBe(201);
    const delivery = await orgA.api.post(`/api/v1/webhooks/${webhook.body.id}/test`);
    expect(delivery.status).toBe(202);
    const licenseToken = await orgA.api.post(`/api/v1/licenses/${license.id}/tokens`, { name: 'matrix' });
    expect(licenseToken.status).toBe(201);
    const policy = await orgA.api.post('/api/v1/policies', { product_id: product.id, name: 'Matrix' });
    expect(policy.status).toBe(201);
    const process = await orgA.api.post(`/api/v1/activations/${activation.body.id}/processes`, { pid: 1 });
    expect(process.status).toBe(201);
    const responseKeys = await orgA.api.get('/api/v1/organizations/current/response-keys');
    expect(responseKeys.status).toBe(200);
    const entitlement = await orgA.api.post('/api/v1/entitlements', {
      code: uniqueCode('ent'),
      name: 'Matrix',
    });
    expect(entitlement.status).toBe(201);
    const relayKeys = relayKeyPair();
    const relayFile = await orgA.api.post(`/api/v1/licenses/${license.id}/relay-files`, {
      site: 'matrix',
      public_key: relayKeys.publicPem,
    });
    expect(relayFile.status).toBe(201);
    world = {
      relayFile: relayFile.body,
      relayKey: relayKeys.privateKey,
      relayReport: relayReport(relayKeys.privateKey, relayFile.body, license.serial, product.id),
      keyPair,
      product,
      license,
      activation: activation.body,
      apiKey: read.key,
      webhook: webhook.body,
      licenseToken: licenseToken.body,
      entitlement: entitlement.body,
      policy: policy.body,
      process: process.body,
      responseKey: responseKeys.body.keys[0],
      delivery: { id: delivery.body.delivery_id },
      range: `from=${new Date(Date.now() - day).toISOString()}&to=${new Date(Date.now() + day).toISOString()}`,
    };
    // A's usage is not empty, so that an empty answer to B proves isolation rather than absence.
    const sync = await client.api.post('/api/v1/licenses/sync', {
      license_serial: license.serial,
      hardware_fingerprint: 'fp-a',
      app_version: '1.0.0',
      features_used: ['pro'],
      seats_in_use: 1,
    });
    expect(sync.status).toBe(200);
    await waitFor(async () => (await syncsOf(license.id)) === 1, { what: "A's first report to be counted" });

    const fromOpenApi = await openApiRoutes(stack.anonymous);
    expect(nestRoutes(stack.gateway)).toEqual(fromOpenApi);
    served = [...new Set(fromOpenApi.map((route) => withoutPrefix(route).route))].sort();
  });
  afterAll(() => stack.close());

  const callAs = (api: ApiClient, prefix: string, call: Call): Promise<ApiResponse> =>
    api.request(call.method, prefix + call.path, call.body);

  const routeCall = async (route: RouteKey, resources: Resources): Promise<Call> => {
    const method = route.split(' ')[0]!;
    return { method, ...(await REQUESTS[route]!(world, resources)) };
  };

  /**
   * The served routes that every table has a row for. The cells are tried over these, so that a
   * new route fails the coverage tests above with a clear diff rather than every test at once.
   */
  const covered = (): RouteKey[] =>
    served.filter((route) => route in SCOPE_TABLE && route in REQUESTS && route in TENANCY);

  const prefixesOf = (route: RouteKey): readonly string[] =>
    SCOPE_TABLE[route] === PUBLIC ? [''] : PREFIXES;

  describe('the tables cover exactly the routes the server has', () => {
    it('reads the same routes from the OpenAPI document as from the Nest router, every API route under both prefixes', async () => {
      const all = await openApiRoutes(stack.anonymous);
      for (const route of served) {
        for (const prefix of prefixesOf(route)) {
          const [method, path] = route.split(' ');
          expect(all).toContain(`${method} ${prefix}${path}`);
        }
      }
      expect(served.length).toBeGreaterThan(30);
    });

    it('has a scope row for every served route, and no row for a route the server lacks', () => {
      expect(Object.keys(SCOPE_TABLE).sort()).toEqual(served);
    });

    it('has a request for every served route, and a tenancy entry (a case, or why none applies)', () => {
      expect(Object.keys(REQUESTS).sort()).toEqual(served);
      expect(Object.keys(TENANCY).sort()).toEqual(served);
    });

    it('has a tenancy case for every route that takes a resource id in its path', () => {
      const withId = served.filter((route) => route.includes('{'));
      expect(withId.length).toBeGreaterThan(10);
      for (const route of withId) {
        const tenancy = TENANCY[route];
        expect({ route, hasCase: tenancy !== undefined && 'call' in tenancy }).toEqual({
          route,
          hasCase: true,
        });
      }
    });

    it('lets admin call every API route (admin may do everything)', () => {
      for (const route of covered()) {
        const allowed = SCOPE_TABLE[route]!;
        if (allowed !== PUBLIC)
          expect({ route, admin: allowed.includes('admin') }).toEqual({ route, admin: true });
      }
    });
  });

  describe('scopes: refused cells', () => {
    it('answers every forbidden (route, key scopes) cell 403 forbidden under both prefixes, and the refused calls change nothing', async () => {
      const before = await stateOfA();
      const syncsBefore = await syncsOf(world.license.id);
      let cells = 0;
      for (const route of covered()) {
        const allowed = SCOPE_TABLE[route]!;
        if (allowed === PUBLIC) continue;
        for (const scope of Object.keys(CALLERS).filter((caller) => !mayCall(allowed, caller))) {
          for (const prefix of PREFIXES) {
            const call = await routeCall(route, existing);
            const response = await callAs(clientsA[scope], prefix, call);
            expect({ route, prefix, scope, status: response.status, code: response.body?.code }).toEqual({
              route,
              prefix,
              scope,
              status: 403,
              code: 'forbidden',
            });
            cells++;
          }
        }
      }
      expect(cells).toBeGreaterThan(40);
      expect(await stateOfA()).toEqual(before);
      await expectNoReportStoredSince(syncsBefore);
    });
  });

  describe('tenancy', () => {
    it("answers org B's admin 404 / empty / not_found for every route naming org A's resources, under both prefixes, and A's data is unchanged", async () => {
      const before = await stateOfA();
      const syncsBefore = await syncsOf(world.license.id);
      let cases = 0;
      for (const route of covered()) {
        const tenancy = TENANCY[route]!;
        if (!('call' in tenancy)) continue;
        for (const prefix of PREFIXES) {
          const call = tenancy.call(world);
          expect(`${call.method} ${call.path.split('?')[0]!.replace(/[0-9a-f-]{36}/g, '{id}')}`).toBe(
            route.replace(/\{[a-z_]+\}/g, '{id}'),
          );
          const response = await callAs(orgB.api, prefix, call);
          try {
            tenancy.expect(response, world);
          } catch (error) {
            throw new Error(
              `${route} under ${prefix}: ${response.status} ${response.text}\n${String(error)}`,
            );
          }
          cases++;
        }
      }
      expect(cases).toBeGreaterThan(50);
      expect(await stateOfA()).toEqual(before);
      await expectNoReportStoredSince(syncsBefore);
      // A's keys and license still work for A: nothing B did revoked, suspended or deleted them.
      expect((await clientsA.read.get('/api/v1/products')).status).toBe(200);
      const validate = await clientsA.client.post('/api/v1/licenses/validate', {
        key: world.license.serial,
        fingerprint: 'fp-a',
      });
      expect(validate.body).toMatchObject({ valid: true, code: 'VALID' });
    });

    it("activates nothing for org B with org A's license_key (the serial) either", async () => {
      const response = await orgB.api.post('/v1/activations', {
        license_key: world.license.serial,
        fingerprint: 'fp-intruder',
      });
      notFound(response);
      const listed = await orgA.api.get(`/api/v1/activations?license_id=${world.license.id}`);
      expect(listed.body.activations.map((a: any) => a.fingerprint)).not.toContain('fp-intruder');
    });

    it("refuses org B attaching org A's key pair to B's own product, so B can never sign with A's key", async () => {
      const { product: productB, keyPair: keyPairB } = await productWithKeyPair(orgB.api);
      notFound(await orgB.api.put(`/api/v1/products/${productB.id}`, { key_pair_id: world.keyPair.id }));
      expect((await orgB.api.get(`/api/v1/products/${productB.id}`)).body.key_pair_id).toBe(keyPairB.id);
      const issued = await createLicense(orgB.api, { product_id: productB.id });
      expect(issued.key_pair_id).toBe(keyPairB.id);
    });

    it("lists none of org A's licenses or activations in org B's unfiltered lists", async () => {
      for (const [path, member, id] of [
        ['/api/v1/licenses?per_page=100', 'licenses', world.license.id],
        ['/v1/activations?per_page=100', 'activations', world.activation.id],
      ] as const) {
        const response = await orgB.api.get(path);
        expect(response.status).toBe(200);
        expect((response.body[member] as { id: string }[]).map((item) => item.id)).not.toContain(id);
      }
    });

    it("keeps answering org A with its status after org B looked A's serial up first on a cache miss", async () => {
      // The serial-status cache is shared by all organizations; a miss filled on B's behalf must
      // not leave an entry that hides A's license from A.
      const license = await createLicense(orgA.api, { product_id: world.product.id });
      await stack.forgetCachedSerials(orgA.id, license.serial);
      const seenByB = await orgB.api.post('/api/v1/licenses/check-revocation', { serials: [license.serial] });
      expect(seenByB.body.results[0]).toMatchObject({ status: 'not_found' });
      const validatedByB = await orgB.api.post('/api/v1/licenses/validate', { key: license.serial });
      expect(validatedByB.body.code).toBe('NOT_FOUND');
      const seenByA = await clientsA.client.post('/api/v1/licenses/check-revocation', {
        serials: [license.serial],
      });
      expect(seenByA.body.results[0]).toMatchObject({ serial: license.serial, status: 'active' });
      const syncedByA = await clientsA.client.post('/api/v1/licenses/sync', {
        license_serial: license.serial,
      });
      expect(syncedByA.body.status).toBe('ok');
    });

    it("does not reveal org A's stored status to org B verifying A's license with A's public key", async () => {
      const revoked = await createLicense(orgA.api, { product_id: world.product.id });
      expect((await orgA.api.delete(`/api/v1/licenses/${revoked.id}`)).status).toBe(200);
      const pem = (await orgA.api.get(`/api/v1/products/${world.product.id}/public-key`)).body.public_key;
      const seenByB = await orgB.api.post('/api/v1/licenses/verify', {
        license_blob: revoked.license_blob,
        public_key: pem,
      });
      expect(seenByB.status).toBe(200);
      expect(seenByB.body.errors).toEqual([]);
      const seenByA = await orgA.api.post('/api/v1/licenses/verify', {
        license_blob: revoked.license_blob,
        public_key: pem,
      });
      expect(seenByA.body.errors.map((e: any) => e.code)).toEqual(['revoked']);
    });
  });

  // Last: allowed calls create, change and sync, and their effects must not land inside the
  // windows in which the tests above compare org A's state.
  describe('scopes: allowed cells', () => {
    // Every route under both prefixes, for each allowed key: ~23 s on a quiet 2-core machine.
    it('answers every allowed (route, key scopes) cell with a 2xx under both prefixes (a key with two scopes may do what either may)', async () => {
      for (const route of covered()) {
        const allowed = SCOPE_TABLE[route]!;
        const callers: [string, ApiClient][] =
          allowed === PUBLIC
            ? [['anonymous', stack.anonymous], ...Object.entries(clientsA)]
            : Object.entries(clientsA).filter(([caller]) => mayCall(allowed, caller));
        for (const [who, api] of callers) {
          for (const prefix of prefixesOf(route)) {
            const call = await routeCall(route, fresh);
            const response = await callAs(api, prefix, call);
            const ok = response.status >= 200 && response.status < 300;
            expect({ route, prefix, who, ok, status: response.status }).toEqual({
              route,
              prefix,
              who,
              ok: true,
              status: response.status,
            });
          }
        }
      }
    }, 90_000);
  });
});
