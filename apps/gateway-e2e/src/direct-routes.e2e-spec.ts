/**
 * `@Direct()` is an optimisation: a direct route must answer exactly what Nest's pipeline answers.
 * Two gateways run on one platform, one with direct routes on and one with them off
 * (`DIRECT_ROUTES=false`). Every direct route gets the same requests on both: successes, each kind
 * of refusal (credentials, scopes, reach, validation, state), signed answers, idempotent replays
 * and unreachable services. The two answers must match: status, headers and body, once what
 * differs by nature (ids, serials, times, signatures, counters) is masked.
 *
 * Each gateway works on fixtures of its own, made the same way, and gets the cases in the same
 * order, so both sides see the same state. A direct route without a case fails the spec.
 */
import { randomUUID } from 'node:crypto';
import { INestApplication, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { loadGatewayConfig, startGateway } from '@licensing/app/gateway';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, productWithKeyPair } from './support/fixtures';

/** What one side's cases work on: the same shapes on both sides, different resources. */
interface Fixtures {
  product: { id: string };
  license: { id: string; serial: string; license_blob: string };
  /** A license of one seat, taken. */
  full: { id: string; serial: string };
  revoked: { id: string; serial: string; license_blob: string };
  activation: { id: string };
  /** An activation of `revoked`, made before its revoke. */
  revokedActivation: { id: string };
  /** A license token of `license`. */
  token: string;
  /** A license token of `full`: it reaches no other license. */
  otherToken: string;
}

interface Request {
  method: 'GET' | 'POST';
  path: string;
  /** A credential: 'admin' (the organization's admin key), a named key, or none. */
  as: 'admin' | 'client' | 'read' | 'other-org' | 'token' | 'other-token' | 'none';
  /** JSON, or a raw string sent as `application/json`. */
  body?: unknown;
  headers?: Record<string, string>;
}

interface Case {
  name: string;
  /** What both sides answer: a check that the case reaches what it means to. */
  status: number;
  /** The route it exercises, as the coverage check names it (`POST /api/v1/licenses`). */
  route: string;
  request: (f: Fixtures) => Request;
}

/** Headers whose values differ by nature: only whether they are there is compared. */
const PRESENCE_ONLY = new Set(['date', 'x-request-id', 'content-length', 'licensing-signature', 'etag']);
const IGNORED = new Set(['connection', 'keep-alive']);

/** Masks what differs by nature, numbering each distinct value so that the structure still compares. */
function masked(text: string): string {
  const seen = new Map<string, string>();
  const label = (kind: string) => (value: string) => {
    if (!seen.has(value)) seen.set(value, `<${kind}${seen.size}>`);
    return seen.get(value)!;
  };
  const blob = label('blob');
  return (
    text
      .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, label('uuid'))
      .replace(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\b/g, '<time>')
      .replace(/\bLIC-[A-Z0-9-]+\b/g, label('serial'))
      .replace(/\bapp-[0-9a-f]{8}\b/g, label('code'))
      // Keys, tokens, files and signatures: base64 runs (with a digit, unlike a media type), joined
      // by dots in a JWS.
      .replace(/[A-Za-z0-9_+/-]{20,}={0,2}(\.{1,2}[A-Za-z0-9_+/-]{20,}={0,2})*/g, (run) =>
        /\d/.test(run) ? blob(run) : run,
      )
  );
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function comparable(response: Response, text: string): Answer {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (IGNORED.has(name)) return;
    if (PRESENCE_ONLY.has(name)) headers[name] = '<present>';
    // Counters and jittered delays: their form is compared, not their value.
    else if (name === 'ratelimit' || name === 'retry-after') headers[name] = value.replace(/\d+/g, 'n');
    else headers[name] = masked(value);
  });
  return { status: response.status, headers, body: masked(text) };
}

/** Every `@Direct()` route of the gateway, under its `/api/v1` prefix. */
function directRoutes(app: INestApplication): string[] {
  const routes = new Set<string>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      const controller = metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const [prefix] = [Reflect.getMetadata(PATH_METADATA, controller)].flat() as string[];
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler !== 'function' || name === 'constructor') continue;
        const config = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as
          { direct?: unknown } | undefined;
        if (!config?.direct) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        const path = [prefix, Reflect.getMetadata(PATH_METADATA, handler) as string]
          .map((part) => part.replace(/^\/+|\/+$/g, ''))
          .filter(Boolean)
          .join('/')
          .replace(/:([A-Za-z0-9_]+)/g, '{$1}');
        routes.add(`${method} /${path}`);
      }
    }
  }
  return [...routes].sort();
}

describe('direct routes answer exactly as Nest’s pipeline does', () => {
  let stack: TestStack;
  let nest: INestApplication;
  let org: TestOrganization;
  let other: TestOrganization;
  const keys: Record<string, string> = {};
  const sides: { name: string; baseUrl: string; fixtures?: Fixtures }[] = [];

  const fixtures = async (): Promise<Fixtures> => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id, max_seats: 5 });
    const full = await createLicense(org.api, { product_id: product.id, max_seats: 1 });
    const revoked = await createLicense(org.api, { product_id: product.id, max_seats: 5 });
    const activate = async (licenseId: string) => {
      const answer = await org.api.post('/api/v1/activations', {
        license_id: licenseId,
        fingerprint: `fixture-${randomUUID()}`,
      });
      expect(answer.status).toBe(201);
      return answer.body as { id: string };
    };
    const activation = await activate(license.id);
    await activate(full.id);
    const revokedActivation = await activate(revoked.id);
    expect((await org.api.delete(`/api/v1/licenses/${revoked.id}`)).status).toBe(200);
    const token = async (licenseId: string) =>
      (await org.api.post(`/api/v1/licenses/${licenseId}/tokens`, {})).body.token as string;
    return {
      product,
      license,
      full,
      revoked,
      activation,
      revokedActivation,
      token: await token(license.id),
      otherToken: await token(full.id),
    };
  };

  beforeAll(async () => {
    stack = await startStack({ env: { DIRECT_ROUTES: 'true' } });
    nest = await startGateway(loadGatewayConfig({ ...stack.env, DIRECT_ROUTES: 'false' }));
    const address = nest.getHttpServer().address() as { port: number };
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    keys.admin = org.adminKey;
    keys['other-org'] = other.adminKey;
    keys.client = (await apiKeyWithScopes(org.api, ['client'])).key.key as string;
    keys.read = (await apiKeyWithScopes(org.api, ['read'])).key.key as string;
    sides.push(
      { name: 'direct', baseUrl: stack.baseUrl, fixtures: await fixtures() },
      { name: 'nest', baseUrl: `http://127.0.0.1:${address.port}`, fixtures: await fixtures() },
    );
  }, 60_000);
  afterAll(async () => {
    await nest?.close();
    await stack?.close();
  });

  async function send(baseUrl: string, f: Fixtures, request: Request): Promise<Answer> {
    const credential = {
      none: undefined,
      token: f.token,
      'other-token': f.otherToken,
      admin: keys.admin,
      client: keys.client,
      read: keys.read,
      'other-org': keys['other-org'],
    }[request.as];
    const body =
      request.body === undefined
        ? undefined
        : typeof request.body === 'string'
          ? request.body
          : JSON.stringify(request.body);
    const response = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(credential ? { authorization: `Bearer ${credential}` } : {}),
        ...request.headers,
      },
      body,
    });
    return comparable(response, await response.text());
  }

  /** Sends the case to both sides, in turn, and answers both answers. */
  async function both(c: Case): Promise<[Answer, Answer]> {
    const answers: Answer[] = [];
    for (const side of sides)
      answers.push(await send(side.baseUrl, side.fixtures!, c.request(side.fixtures!)));
    return answers as [Answer, Answer];
  }

  const get = (path: string, as: Request['as'] = 'admin', headers?: Record<string, string>): Request => ({
    method: 'GET',
    path,
    as,
    headers,
  });
  const post = (
    path: string,
    body: unknown,
    as: Request['as'] = 'admin',
    headers?: Record<string, string>,
  ): Request => ({
    method: 'POST',
    path,
    as,
    body,
    headers,
  });
  const signed = { 'licensing-nonce': 'differential-nonce-0001' };
  const unknownId = '00000000-0000-4000-8000-000000000000';

  const PRODUCT = 'GET /api/v1/products/{id}';
  const PUBLIC_KEY = 'GET /api/v1/products/{id}/public-key';
  const CREATE = 'POST /api/v1/licenses';
  const VERIFY = 'POST /api/v1/licenses/verify';
  const VALIDATE = 'POST /api/v1/licenses/validate';
  const LICENSE = 'GET /api/v1/licenses/{id}';
  const CHECK = 'POST /api/v1/licenses/check-revocation';
  const SYNC = 'POST /api/v1/licenses/sync';
  const ACTIVATE = 'POST /api/v1/activations';
  const HEARTBEAT = 'POST /api/v1/activations/{id}/heartbeat';

  const cases: Case[] = [
    {
      name: 'a product',
      status: 200,
      route: PRODUCT,
      request: (f) => get(`/api/v1/products/${f.product.id}`),
    },
    {
      name: 'a product at /v1',
      status: 200,
      route: PRODUCT,
      request: (f) => get(`/v1/products/${f.product.id}`),
    },
    {
      name: 'a product, no credential',
      status: 401,
      route: PRODUCT,
      request: (f) => get(`/api/v1/products/${f.product.id}`, 'none'),
    },
    {
      name: 'a product, a client key',
      status: 403,
      route: PRODUCT,
      request: (f) => get(`/api/v1/products/${f.product.id}`, 'client'),
    },
    {
      name: "another organization's product",
      status: 404,
      route: PRODUCT,
      request: (f) => get(`/api/v1/products/${f.product.id}`, 'other-org'),
    },
    {
      name: 'a product id that is no UUID',
      status: 400,
      route: PRODUCT,
      request: () => get('/api/v1/products/not-a-uuid'),
    },
    {
      name: 'a product that does not exist',
      status: 404,
      route: PRODUCT,
      request: () => get(`/api/v1/products/${unknownId}`),
    },

    {
      name: 'a public key',
      status: 200,
      route: PUBLIC_KEY,
      request: (f) => get(`/api/v1/products/${f.product.id}/public-key`, 'client'),
    },
    {
      name: 'a public key, no credential',
      status: 401,
      route: PUBLIC_KEY,
      request: (f) => get(`/api/v1/products/${f.product.id}/public-key`, 'none'),
    },
    {
      name: 'a public key by a license token',
      status: 200,
      route: PUBLIC_KEY,
      request: (f) => get(`/api/v1/products/${f.product.id}/public-key`, 'token'),
    },
    {
      name: 'a public key of nothing',
      status: 404,
      route: PUBLIC_KEY,
      request: () => get(`/api/v1/products/${unknownId}/public-key`),
    },

    {
      name: 'a create',
      status: 201,
      route: CREATE,
      request: (f) => post('/api/v1/licenses', { product_id: f.product.id, max_seats: 2, features: ['pro'] }),
    },
    {
      name: 'a create with an unknown field',
      status: 400,
      route: CREATE,
      request: (f) => post('/api/v1/licenses', { product_id: f.product.id, owner: 'me' }),
    },
    {
      name: 'a create with bad values',
      status: 400,
      route: CREATE,
      request: (f) =>
        post('/api/v1/licenses', { product_id: f.product.id, max_seats: 0, valid_until: 'soon' }),
    },
    {
      name: 'a create of no product',
      status: 404,
      route: CREATE,
      request: () => post('/api/v1/licenses', { product_id: unknownId }),
    },
    {
      name: 'a create by a client key',
      status: 403,
      route: CREATE,
      request: (f) => post('/api/v1/licenses', { product_id: f.product.id }, 'client'),
    },
    {
      name: 'a create by another organization',
      status: 404,
      route: CREATE,
      request: (f) => post('/api/v1/licenses', { product_id: f.product.id }, 'other-org'),
    },
    {
      name: 'a create by a license token',
      status: 403,
      route: CREATE,
      request: (f) => post('/api/v1/licenses', { product_id: f.product.id }, 'token'),
    },
    {
      name: 'a create that is not JSON',
      status: 400,
      route: CREATE,
      request: () => post('/api/v1/licenses', '{"product_id":'),
    },
    {
      name: 'a create that is a JSON array',
      status: 400,
      route: CREATE,
      request: () => post('/api/v1/licenses', '[]'),
    },

    {
      name: 'a verify',
      status: 200,
      route: VERIFY,
      request: (f) =>
        post(
          '/api/v1/licenses/verify',
          { product_id: f.product.id, license_blob: f.license.license_blob },
          'client',
        ),
    },
    {
      name: 'a signed verify',
      status: 200,
      route: VERIFY,
      request: (f) =>
        post(
          '/api/v1/licenses/verify',
          { product_id: f.product.id, license_blob: f.license.license_blob },
          'client',
          signed,
        ),
    },
    {
      name: 'a verify of a revoked license',
      status: 200,
      route: VERIFY,
      request: (f) =>
        post(
          '/api/v1/licenses/verify',
          { product_id: f.product.id, license_blob: f.revoked.license_blob },
          'client',
        ),
    },
    {
      name: 'a verify of a tampered file',
      status: 200,
      route: VERIFY,
      request: (f) =>
        post(
          '/api/v1/licenses/verify',
          { product_id: f.product.id, license_blob: `${f.license.license_blob.slice(0, -4)}AAAA` },
          'client',
        ),
    },
    {
      name: 'a verify of garbage',
      status: 200,
      route: VERIFY,
      request: (f) =>
        post('/api/v1/licenses/verify', { product_id: f.product.id, license_blob: 'garbage' }, 'client'),
    },
    {
      name: 'a verify without a product',
      status: 400,
      route: VERIFY,
      request: (f) => post('/api/v1/licenses/verify', { license_blob: f.license.license_blob }, 'client'),
    },
    {
      name: 'a verify by a license token',
      status: 403,
      route: VERIFY,
      request: (f) =>
        post(
          '/api/v1/licenses/verify',
          { product_id: f.product.id, license_blob: f.license.license_blob },
          'token',
        ),
    },
    {
      name: 'a verify, no credential',
      status: 401,
      route: VERIFY,
      request: (f) =>
        post(
          '/api/v1/licenses/verify',
          { product_id: f.product.id, license_blob: f.license.license_blob },
          'none',
        ),
    },

    {
      name: 'a validate',
      status: 200,
      route: VALIDATE,
      request: (f) => post('/api/v1/licenses/validate', { key: f.license.serial }, 'client'),
    },
    {
      name: 'a signed validate',
      status: 200,
      route: VALIDATE,
      request: (f) => post('/api/v1/licenses/validate', { key: f.license.serial }, 'client', signed),
    },
    {
      name: 'a validate of a revoked license',
      status: 200,
      route: VALIDATE,
      request: (f) => post('/api/v1/licenses/validate', { key: f.revoked.serial }, 'client'),
    },
    {
      name: 'a validate of an unknown key',
      status: 200,
      route: VALIDATE,
      request: () => post('/api/v1/licenses/validate', { key: 'LIC-NOPE-0000' }, 'client'),
    },
    {
      name: 'a validate by its license token',
      status: 200,
      route: VALIDATE,
      request: (f) => post('/api/v1/licenses/validate', { key: f.license.serial }, 'token'),
    },
    {
      name: "a validate by another license's token",
      status: 200,
      route: VALIDATE,
      request: (f) => post('/api/v1/licenses/validate', { key: f.license.serial }, 'other-token'),
    },
    {
      name: 'a validate of nothing',
      status: 400,
      route: VALIDATE,
      request: () => post('/api/v1/licenses/validate', {}, 'client'),
    },

    {
      name: 'a license',
      status: 200,
      route: LICENSE,
      request: (f) => get(`/api/v1/licenses/${f.license.id}`),
    },
    {
      name: 'a license by a read key',
      status: 200,
      route: LICENSE,
      request: (f) => get(`/api/v1/licenses/${f.license.id}`, 'read'),
    },
    {
      name: 'a license by its token',
      status: 200,
      route: LICENSE,
      request: (f) => get(`/api/v1/licenses/${f.license.id}`, 'token'),
    },
    {
      name: "a license by another license's token",
      status: 404,
      route: LICENSE,
      request: (f) => get(`/api/v1/licenses/${f.license.id}`, 'other-token'),
    },
    {
      name: "another organization's license",
      status: 404,
      route: LICENSE,
      request: (f) => get(`/api/v1/licenses/${f.license.id}`, 'other-org'),
    },
    {
      name: 'a license id that is no UUID',
      status: 400,
      route: LICENSE,
      request: () => get('/api/v1/licenses/LIC-1'),
    },
    {
      name: 'a revoked license',
      status: 200,
      route: LICENSE,
      request: (f) => get(`/api/v1/licenses/${f.revoked.id}`),
    },

    {
      name: 'a check',
      status: 200,
      route: CHECK,
      request: (f) =>
        post(
          '/api/v1/licenses/check-revocation',
          { serials: [f.license.serial, f.revoked.serial, 'LIC-NOPE-0000'] },
          'client',
        ),
    },
    {
      name: 'a signed check',
      status: 200,
      route: CHECK,
      request: (f) =>
        post('/api/v1/licenses/check-revocation', { serials: [f.revoked.serial] }, 'client', signed),
    },
    {
      name: 'a check of nothing',
      status: 400,
      route: CHECK,
      request: () => post('/api/v1/licenses/check-revocation', { serials: [] }, 'client'),
    },
    {
      name: 'a check of 101 serials',
      status: 400,
      route: CHECK,
      request: (f) =>
        post(
          '/api/v1/licenses/check-revocation',
          { serials: Array.from({ length: 101 }, () => f.license.serial) },
          'client',
        ),
    },
    {
      name: 'a check by another organization',
      status: 200,
      route: CHECK,
      request: (f) => post('/api/v1/licenses/check-revocation', { serials: [f.license.serial] }, 'other-org'),
    },
    {
      name: 'a check by a license token',
      status: 403,
      route: CHECK,
      request: (f) =>
        post('/api/v1/licenses/check-revocation', { serials: [f.license.serial, f.full.serial] }, 'token'),
    },

    {
      name: 'a sync',
      status: 200,
      route: SYNC,
      request: (f) =>
        post(
          '/api/v1/licenses/sync',
          { license_serial: f.license.serial, report_id: f.activation.id },
          'client',
        ),
    },
    {
      name: 'the same sync again',
      status: 200,
      route: SYNC,
      request: (f) =>
        post(
          '/api/v1/licenses/sync',
          { license_serial: f.license.serial, report_id: f.activation.id },
          'client',
        ),
    },
    {
      name: 'a signed sync',
      status: 200,
      route: SYNC,
      request: (f) =>
        post(
          '/api/v1/licenses/sync',
          { license_serial: f.license.serial, report_id: f.full.id },
          'client',
          signed,
        ),
    },
    {
      name: 'a sync of a revoked license',
      status: 200,
      route: SYNC,
      request: (f) =>
        post(
          '/api/v1/licenses/sync',
          { license_serial: f.revoked.serial, report_id: f.revoked.id },
          'client',
        ),
    },
    {
      name: 'a sync of an unknown serial',
      status: 200,
      route: SYNC,
      request: (f) =>
        post('/api/v1/licenses/sync', { license_serial: 'LIC-NOPE-0000', report_id: f.product.id }, 'client'),
    },
    {
      name: 'a sync without a report id',
      status: 200,
      route: SYNC,
      request: (f) => post('/api/v1/licenses/sync', { license_serial: f.license.serial }, 'client'),
    },
    {
      name: "a sync by another license's token",
      status: 200,
      route: SYNC,
      request: (f) =>
        post(
          '/api/v1/licenses/sync',
          { license_serial: f.license.serial, report_id: randomUUID() },
          'other-token',
        ),
    },

    {
      name: 'an activation',
      status: 201,
      route: ACTIVATE,
      request: (f) =>
        post('/api/v1/activations', { license_id: f.license.id, fingerprint: 'machine-a' }, 'client'),
    },
    {
      name: 'the same machine again',
      status: 200,
      route: ACTIVATE,
      request: (f) =>
        post('/api/v1/activations', { license_id: f.license.id, fingerprint: 'machine-a' }, 'client'),
    },
    {
      name: 'an activation beyond the seats',
      status: 409,
      route: ACTIVATE,
      request: (f) =>
        post('/api/v1/activations', { license_id: f.full.id, fingerprint: 'machine-b' }, 'client'),
    },
    {
      name: 'an activation of a revoked license',
      status: 422,
      route: ACTIVATE,
      request: (f) =>
        post('/api/v1/activations', { license_id: f.revoked.id, fingerprint: 'machine-c' }, 'client'),
    },
    {
      name: 'an activation by its license token',
      status: 201,
      route: ACTIVATE,
      request: (f) =>
        post('/api/v1/activations', { license_id: f.license.id, fingerprint: 'machine-d' }, 'token'),
    },
    {
      name: "an activation by another license's token",
      status: 404,
      route: ACTIVATE,
      request: (f) =>
        post('/api/v1/activations', { license_id: f.license.id, fingerprint: 'machine-e' }, 'other-token'),
    },
    {
      name: 'an activation without a fingerprint',
      status: 400,
      route: ACTIVATE,
      request: (f) => post('/api/v1/activations', { license_id: f.license.id }, 'client'),
    },
    {
      name: 'an activation by another organization',
      status: 404,
      route: ACTIVATE,
      request: (f) =>
        post('/api/v1/activations', { license_id: f.license.id, fingerprint: 'machine-f' }, 'other-org'),
    },

    {
      name: 'a heartbeat',
      status: 200,
      route: HEARTBEAT,
      request: (f) => post(`/api/v1/activations/${f.activation.id}/heartbeat`, undefined, 'client'),
    },
    {
      name: 'a heartbeat by its license token',
      status: 200,
      route: HEARTBEAT,
      request: (f) => post(`/api/v1/activations/${f.activation.id}/heartbeat`, undefined, 'token'),
    },
    {
      name: "a heartbeat by another license's token",
      status: 404,
      route: HEARTBEAT,
      request: (f) => post(`/api/v1/activations/${f.activation.id}/heartbeat`, undefined, 'other-token'),
    },
    {
      name: 'a heartbeat of a revoked license',
      status: 422,
      route: HEARTBEAT,
      request: (f) => post(`/api/v1/activations/${f.revokedActivation.id}/heartbeat`, undefined, 'client'),
    },
    {
      name: 'a heartbeat of nothing',
      status: 404,
      route: HEARTBEAT,
      request: () => post(`/api/v1/activations/${unknownId}/heartbeat`, undefined, 'client'),
    },
    {
      name: 'a heartbeat id that is no UUID',
      status: 400,
      route: HEARTBEAT,
      request: () => post('/api/v1/activations/x/heartbeat', undefined, 'client'),
    },
    {
      name: 'a heartbeat, no credential',
      status: 401,
      route: HEARTBEAT,
      request: (f) => post(`/api/v1/activations/${f.activation.id}/heartbeat`, undefined, 'none'),
    },
  ];

  it('has a case for every direct route, and every case names one', () => {
    const direct = directRoutes(stack.gateway);
    expect(direct.length).toBeGreaterThanOrEqual(10);
    expect([...new Set(cases.map((c) => c.route))].sort()).toEqual(direct);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const [direct, nestAnswer] = await both(c);
    expect(direct.status).toBe(c.status);
    expect(direct).toEqual(nestAnswer);
    if (c.status === 200 && c.request(sides[0]!.fixtures!).headers?.['licensing-nonce'])
      expect(direct.headers['licensing-signature']).toBe('<present>');
  });

  it('replays an idempotent create the same way, and refuses a reused key alike', async () => {
    const key = (side: string) => `differential-${side}-${randomUUID()}`;
    const answers: Answer[][] = [];
    for (const side of sides) {
      const headers = { 'idempotency-key': key(side.name) };
      const request = post('/api/v1/licenses', { product_id: side.fixtures!.product.id }, 'admin', headers);
      answers.push([
        await send(side.baseUrl, side.fixtures!, request),
        await send(side.baseUrl, side.fixtures!, request),
        await send(side.baseUrl, side.fixtures!, {
          ...request,
          body: { product_id: side.fixtures!.product.id, max_seats: 3 },
        }),
      ]);
    }
    expect(answers[0]![0]!.status).toBe(201);
    expect(answers[0]![1]!.headers['idempotent-replayed']).toBe('true');
    expect(answers[0]![2]!.status).toBe(409);
    expect(answers[0]).toEqual(answers[1]);
  });

  it('answers alike while the services behind a route are down', async () => {
    await stack.stopService('license-service');
    await stack.stopService('product-service');
    try {
      let unavailable = 0;
      for (const c of cases.filter((c) => !c.name.includes('again'))) {
        const [direct, nestAnswer] = await both(c);
        expect({ case: c.name, ...direct }).toEqual({ case: c.name, ...nestAnswer });
        if (direct.status === 503) {
          unavailable++;
          expect(direct.headers['retry-after']).toBe('n');
        }
      }
      // Creates, products, licenses, verifies, validates and seats need the stopped services.
      expect(unavailable).toBeGreaterThanOrEqual(20);
    } finally {
      await stack.startService('product-service');
      await stack.startService('license-service');
    }
  });
});
