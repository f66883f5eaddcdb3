import { createHash, randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { createActivationRelease, createActivationRequest } from '@licensing/license-verifier';
import { ApiClient, ApiResponse, waitFor } from '@licensing/shared/testing';
import { loadGatewayConfig, startGateway } from '@licensing/app/gateway';
import { apiKeyWithScopes, createLicense, productWithKeyPair, sql } from './support/fixtures';
import { TestOrganization, TestStack, startStack } from './support/stack';

/**
 * License tokens and machine tokens: a credential taken out of a shipped application reaches one
 * license (or one machine), and a seat cannot be multiplied. Each attack a dishonest customer would
 * try with what ships inside an application is replayed here and shown refused.
 */

/** The routes each token may call, as the OpenAPI document must say (`x-allowed-scopes`). */
const LICENSE_TOKEN_ROUTES = [
  'DELETE /activations/{id}',
  'DELETE /activations/{id}/processes/{process_id}',
  'GET /activations',
  'GET /activations/{id}/processes',
  'GET /licenses/events',
  'GET /licenses/{id}',
  'GET /licenses/{id}/download',
  'GET /products/{id}/public-key',
  'GET /products/{id}/revocation-list',
  'POST /activations',
  'POST /activations/offline',
  'POST /activations/offline/release',
  'POST /activations/{id}/checkout',
  'POST /activations/{id}/heartbeat',
  'POST /activations/{id}/processes',
  'POST /activations/{id}/processes/{process_id}/heartbeat',
  'POST /licenses/sync',
  'POST /licenses/validate',
  'POST /licenses/{id}/check-in',
  'POST /licenses/{id}/checkout',
  'POST /licenses/{id}/usage',
];
const MACHINE_TOKEN_ROUTES = [
  'DELETE /activations/{id}',
  'DELETE /activations/{id}/processes/{process_id}',
  'GET /activations/{id}/processes',
  'POST /activations/{id}/checkout',
  'POST /activations/{id}/heartbeat',
  'POST /activations/{id}/processes',
  'POST /activations/{id}/processes/{process_id}/heartbeat',
  'POST /licenses/sync',
  'POST /licenses/validate',
];

interface Operation {
  route: string;
  scopes: string[];
}

/** Every operation of the OpenAPI document, without its prefix, with the scopes it accepts. */
async function operationsOf(anonymous: ApiClient): Promise<Operation[]> {
  const document = (await anonymous.get('/openapi.json')).body as {
    paths: Record<string, Record<string, { 'x-allowed-scopes'?: string[] }>>;
  };
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      operations.push({
        route: `${method.toUpperCase()} ${path}`,
        scopes: operation['x-allowed-scopes'] ?? [],
      });
    }
  }
  return operations;
}

/** The status of a Server-Sent Events stream, which is then dropped. */
async function streamStatus(api: ApiClient, path: string): Promise<number> {
  const aborted = new AbortController();
  const response = await fetch(api.baseUrl + path, {
    headers: { authorization: `Bearer ${api.apiKey}` },
    signal: aborted.signal,
  });
  aborted.abort();
  return response.status;
}

const notFound = (response: ApiResponse): void => {
  expect({ status: response.status, code: response.body?.code }).toEqual({ status: 404, code: 'not_found' });
};

describe('credentials that reach one license', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let client: ApiClient;
  let productId: string;
  let otherProductId: string;

  /** A license token of `licenseId`, and a client authenticated with it. */
  const tokenOf = async (licenseId: string, body: Record<string, unknown> = {}) => {
    const created = await org.api.post(`/api/v1/licenses/${licenseId}/tokens`, body);
    expect(created.status).toBe(201);
    return { view: created.body, api: org.api.withKey(created.body.token as string) };
  };
  const newLicense = (body: Record<string, unknown> = {}) =>
    createLicense(org.api, { product_id: productId, max_seats: 5, ...body });
  const syncsOf = async (licenseId: string): Promise<number> =>
    (await org.api.get(`/api/v1/licenses/${licenseId}/usage`)).body.syncs as number;

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
    client = (await apiKeyWithScopes(org.api, ['client'])).api;
    productId = (await productWithKeyPair(org.api)).product.id;
    otherProductId = (await productWithKeyPair(org.api)).product.id;
  });
  afterAll(() => stack.close());

  describe('license tokens', () => {
    it('is shown once, listed by prefix only, and refused at once after revocation, even while cached', async () => {
      const license = await newLicense();
      const { view, api } = await tokenOf(license.id, { name: 'photo-editor' });
      expect(view).toMatchObject({ license_id: license.id, name: 'photo-editor', expires_at: null });
      expect(view.token).toMatch(/^lt_[A-Za-z0-9_-]{43}$/);
      expect(view.prefix).toBe(view.token.slice(0, 10));
      const listed = await org.api.get(`/api/v1/licenses/${license.id}/tokens`);
      expect(listed.body).toEqual({ license_tokens: [{ ...view, token: undefined }], total: 1 });
      expect(listed.text).not.toContain(view.token);
      // Only the token's SHA-256 is stored.
      const stored = await sql(`SELECT * FROM license.license_tokens WHERE id = $1`, [view.id]);
      expect(stored[0].token_hash).toBe(createHash('sha256').update(view.token).digest('hex'));
      expect(JSON.stringify(stored)).not.toContain(view.token);

      expect((await api.post('/api/v1/licenses/validate', { key: license.serial })).body.code).toBe('VALID');
      expect((await org.api.delete(`/api/v1/license-tokens/${view.id}`)).status).toBe(200);
      const refused = await api.post('/api/v1/licenses/validate', { key: license.serial });
      expect(refused.status).toBe(401);
      expect((await org.api.get(`/api/v1/licenses/${license.id}/tokens`)).body.total).toBe(0);
      notFound(await org.api.delete(`/api/v1/license-tokens/${view.id}`));
    });

    it('is refused on another gateway the moment it is revoked there (the broadcast)', async () => {
      const second: INestApplication = await startGateway(loadGatewayConfig(stack.env));
      try {
        const { port } = second.getHttpServer().address() as { port: number };
        const license = await newLicense();
        const { view } = await tokenOf(license.id);
        const elsewhere = new ApiClient(`http://127.0.0.1:${port}`, view.token as string);
        expect((await elsewhere.post('/api/v1/licenses/validate', { key: license.serial })).status).toBe(200);
        expect((await org.api.delete(`/api/v1/license-tokens/${view.id}`)).status).toBe(200);
        await waitFor(
          async () =>
            (await elsewhere.post('/api/v1/licenses/validate', { key: license.serial })).status === 401,
          { what: 'the second gateway to refuse the revoked token', timeoutMs: 2_000 },
        );
      } finally {
        await second.close();
      }
    });

    it('stops working at its expires_at', async () => {
      const license = await newLicense();
      const past = await org.api.post(`/api/v1/licenses/${license.id}/tokens`, {
        expires_at: new Date(Date.now() - 1000).toISOString(),
      });
      expect(past.status).toBe(400);
      const { api } = await tokenOf(license.id, { expires_at: new Date(Date.now() + 1500).toISOString() });
      expect((await api.post('/api/v1/licenses/validate', { key: license.serial })).status).toBe(200);
      await waitFor(
        async () => (await api.post('/api/v1/licenses/validate', { key: license.serial })).status === 401,
        { what: 'the token to expire', timeoutMs: 5_000 },
      );
    });

    it("acts on its own license and answers another license of the same organization as another organization's", async () => {
      const own = await newLicense();
      const other = await newLicense();
      const foreign = await createLicense(org.api, { product_id: otherProductId });
      const { api } = await tokenOf(own.id);
      const othersActivation = await org.api.post('/api/v1/activations', {
        license_id: other.id,
        fingerprint: 'fp-other',
      });
      expect(othersActivation.status).toBe(201);

      expect((await api.get(`/api/v1/licenses/${own.id}`)).body.serial).toBe(own.serial);
      expect((await api.get(`/api/v1/licenses/${own.id}/download`)).status).toBe(200);
      notFound(await api.get(`/api/v1/licenses/${other.id}`));
      notFound(await api.get(`/v1/licenses/${other.id}/download`));
      expect((await api.get(`/api/v1/products/${productId}/public-key`)).status).toBe(200);
      expect((await api.get(`/api/v1/products/${productId}/revocation-list`)).status).toBe(200);
      notFound(await api.get(`/api/v1/products/${otherProductId}/public-key`));
      notFound(await api.get(`/api/v1/products/${otherProductId}/revocation-list`));

      expect((await api.post('/api/v1/licenses/validate', { key: own.serial })).body.code).toBe('VALID');
      expect(await api.post('/api/v1/licenses/validate', { key: other.serial })).toMatchObject({
        status: 200,
        body: { valid: false, code: 'NOT_FOUND', license: null, activation: null },
      });

      // A sync for another serial is answered not_found and never counted.
      const before = await syncsOf(other.id);
      const stolen = await api.post('/api/v1/licenses/sync', {
        license_serial: other.serial,
        seats_in_use: 1,
      });
      expect(stolen.body.status).toBe('not_found');
      const marker = await client.post('/api/v1/licenses/sync', { license_serial: other.serial });
      expect(marker.body.status).toBe('ok');
      await waitFor(async () => (await syncsOf(other.id)) >= before + 1, { what: 'the marker report' });
      expect(await syncsOf(other.id)).toBe(before + 1);
      expect((await api.post('/api/v1/licenses/sync', { license_serial: own.serial })).body.status).toBe(
        'ok',
      );

      notFound(await api.post('/api/v1/activations', { license_id: other.id, fingerprint: 'fp-x' }));
      notFound(await api.post('/api/v1/activations', { license_key: other.serial, fingerprint: 'fp-x' }));
      notFound(await api.post('/api/v1/activations', { license_key: foreign.serial, fingerprint: 'fp-x' }));
      notFound(await api.post(`/api/v1/activations/${othersActivation.body.id}/heartbeat`));
      notFound(await api.delete(`/api/v1/activations/${othersActivation.body.id}`));
      const offline = await createActivationRequest({ licenseKey: other.serial, fingerprint: 'air-x' });
      notFound(await api.post('/api/v1/activations/offline', { request: offline.request }));

      const mine = await api.post('/api/v1/activations', { license_id: own.id, fingerprint: 'fp-own' });
      expect(mine.status).toBe(201);
      const listed = await api.get('/api/v1/activations');
      expect(listed.body.activations.map((a: any) => a.id)).toEqual([mine.body.id]);
      expect((await api.get(`/api/v1/activations?license_id=${other.id}`)).body).toEqual({
        activations: [],
        total: 0,
      });
      // The other license's seat is untouched.
      const seats = await org.api.get(`/api/v1/activations?license_id=${other.id}`);
      expect(seats.body.activations.map((a: any) => a.fingerprint)).toEqual(['fp-other']);
    });

    it('answers 2xx on every route the OpenAPI document grants each token, for its own license, under both prefixes', async () => {
      const license = await newLicense({ max_seats: 50 });
      const { api: licenseApi } = await tokenOf(license.id);
      const seat = async () => {
        const answer = await licenseApi.post('/api/v1/activations', {
          license_id: license.id,
          fingerprint: `m-${randomUUID()}`,
        });
        expect(answer.status).toBe(201);
        return answer.body as { id: string; machine_token: string };
      };
      const offlineSeat = async () => {
        const request = await createActivationRequest({
          licenseKey: license.serial,
          fingerprint: `a-${randomUUID()}`,
        });
        const answer = await licenseApi.post('/api/v1/activations/offline', { request: request.request });
        expect(answer.status).toBe(201);
        return createActivationRelease(answer.body.activation_file, request.machineKey);
      };
      const process = async (api: ApiClient, activationId: string) => {
        const answer = await api.post(`/api/v1/activations/${activationId}/processes`, { pid: 1 });
        expect(answer.status).toBe(201);
        return answer.body as { id: string; activation_id: string };
      };
      type Cell = () => Promise<{ api: ApiClient; method: string; path: string; body?: unknown }>;
      const asLicense =
        (method: string, path: string, body?: unknown): Cell =>
        async () => ({
          api: licenseApi,
          method,
          path,
          body,
        });
      const cells: Record<'license' | 'machine', Record<string, Cell>> = {
        license: {
          'DELETE /activations/{id}': async () => ({
            api: licenseApi,
            method: 'DELETE',
            path: `/activations/${(await seat()).id}`,
          }),
          'GET /activations': asLicense('GET', '/activations'),
          // A stream that never ends: its status is read, then the stream is dropped.
          'GET /licenses/events': asLicense('STREAM', `/licenses/events?serials=${license.serial}`),
          'GET /licenses/{id}': asLicense('GET', `/licenses/${license.id}`),
          'GET /licenses/{id}/download': asLicense('GET', `/licenses/${license.id}/download`),
          'GET /products/{id}/public-key': asLicense('GET', `/products/${productId}/public-key`),
          'GET /products/{id}/revocation-list': asLicense('GET', `/products/${productId}/revocation-list`),
          'POST /activations': asLicense('POST', '/activations', {
            license_key: license.serial,
            fingerprint: 'm-own',
          }),
          'POST /activations/offline': async () => {
            const request = await createActivationRequest({
              licenseKey: license.serial,
              fingerprint: `air-${randomUUID()}`,
            });
            return {
              api: licenseApi,
              method: 'POST',
              path: '/activations/offline',
              body: { request: request.request },
            };
          },
          'POST /activations/offline/release': async () => ({
            api: licenseApi,
            method: 'POST',
            path: '/activations/offline/release',
            body: { release: await offlineSeat() },
          }),
          'POST /activations/{id}/checkout': async () => ({
            api: licenseApi,
            method: 'POST',
            path: `/activations/${(await seat()).id}/checkout`,
            body: {},
          }),
          'POST /activations/{id}/heartbeat': async () => ({
            api: licenseApi,
            method: 'POST',
            path: `/activations/${(await seat()).id}/heartbeat`,
          }),
          'POST /licenses/sync': asLicense('POST', '/licenses/sync', { license_serial: license.serial }),
          'POST /licenses/{id}/check-in': asLicense('POST', `/licenses/${license.id}/check-in`),
          'POST /activations/{id}/processes': async () => ({
            api: licenseApi,
            method: 'POST',
            path: `/activations/${(await seat()).id}/processes`,
            body: { pid: 7 },
          }),
          'GET /activations/{id}/processes': async () => ({
            api: licenseApi,
            method: 'GET',
            path: `/activations/${(await seat()).id}/processes`,
          }),
          'POST /activations/{id}/processes/{process_id}/heartbeat': async () => {
            const own = await process(licenseApi, (await seat()).id);
            return {
              api: licenseApi,
              method: 'POST',
              path: `/activations/${own.activation_id}/processes/${own.id}/heartbeat`,
            };
          },
          'DELETE /activations/{id}/processes/{process_id}': async () => {
            const own = await process(licenseApi, (await seat()).id);
            return {
              api: licenseApi,
              method: 'DELETE',
              path: `/activations/${own.activation_id}/processes/${own.id}`,
            };
          },
          'POST /licenses/validate': asLicense('POST', '/licenses/validate', { key: license.serial }),
          'POST /licenses/{id}/checkout': asLicense('POST', `/licenses/${license.id}/checkout`, {}),
          'POST /licenses/{id}/usage': asLicense('POST', `/licenses/${license.id}/usage`, { increment: 1 }),
        },
        machine: {
          'DELETE /activations/{id}': async () => {
            const own = await seat();
            return {
              api: org.api.withKey(own.machine_token),
              method: 'DELETE',
              path: `/activations/${own.id}`,
            };
          },
          'POST /activations/{id}/checkout': async () => {
            const own = await seat();
            return {
              api: org.api.withKey(own.machine_token),
              method: 'POST',
              path: `/activations/${own.id}/checkout`,
              body: {},
            };
          },
          'POST /activations/{id}/heartbeat': async () => {
            const own = await seat();
            return {
              api: org.api.withKey(own.machine_token),
              method: 'POST',
              path: `/activations/${own.id}/heartbeat`,
            };
          },
          'POST /licenses/sync': async () => ({
            api: org.api.withKey((await seat()).machine_token),
            method: 'POST',
            path: '/licenses/sync',
            body: { license_serial: license.serial },
          }),
          'POST /activations/{id}/processes': async () => {
            const own = await seat();
            return {
              api: org.api.withKey(own.machine_token),
              method: 'POST',
              path: `/activations/${own.id}/processes`,
              body: { pid: 7 },
            };
          },
          'GET /activations/{id}/processes': async () => {
            const own = await seat();
            return {
              api: org.api.withKey(own.machine_token),
              method: 'GET',
              path: `/activations/${own.id}/processes`,
            };
          },
          'POST /activations/{id}/processes/{process_id}/heartbeat': async () => {
            const own = await seat();
            const machineApi = org.api.withKey(own.machine_token);
            const started = await process(machineApi, own.id);
            return {
              api: machineApi,
              method: 'POST',
              path: `/activations/${own.id}/processes/${started.id}/heartbeat`,
            };
          },
          'DELETE /activations/{id}/processes/{process_id}': async () => {
            const own = await seat();
            const machineApi = org.api.withKey(own.machine_token);
            const started = await process(machineApi, own.id);
            return {
              api: machineApi,
              method: 'DELETE',
              path: `/activations/${own.id}/processes/${started.id}`,
            };
          },
          'POST /licenses/validate': async () => ({
            api: org.api.withKey((await seat()).machine_token),
            method: 'POST',
            path: '/licenses/validate',
            body: { key: license.serial },
          }),
        },
      };
      expect(Object.keys(cells.license).sort()).toEqual(LICENSE_TOKEN_ROUTES);
      expect(Object.keys(cells.machine).sort()).toEqual(MACHINE_TOKEN_ROUTES);
      for (const [who, routes] of Object.entries(cells)) {
        for (const [route, cell] of Object.entries(routes)) {
          for (const prefix of ['/api/v1', '/v1']) {
            const { api, method, path, body } = await cell();
            const status =
              method === 'STREAM'
                ? await streamStatus(api, prefix + path)
                : (await api.request(method, prefix + path, body)).status;
            const ok = status >= 200 && status < 300;
            expect({ who, route, prefix, ok, status }).toEqual({ who, route, prefix, ok: true, status });
          }
        }
      }
    });

    it('is refused 403 on every other route of the OpenAPI document, under both prefixes', async () => {
      const license = await newLicense();
      const { api: licenseApi } = await tokenOf(license.id);
      const activated = await licenseApi.post('/api/v1/activations', {
        license_id: license.id,
        fingerprint: 'm',
      });
      const machineApi = org.api.withKey(activated.body.machine_token as string);
      const operations = await operationsOf(stack.anonymous);
      const granted = (scope: string) =>
        operations
          .filter((operation) => operation.scopes.includes(scope))
          .map((operation) => operation.route)
          .sort();
      expect(granted('license')).toEqual(LICENSE_TOKEN_ROUTES);
      expect(granted('machine')).toEqual(MACHINE_TOKEN_ROUTES);

      let cells = 0;
      for (const { route, scopes } of operations) {
        if (scopes.length === 0) continue; // a public probe
        const [method, template] = route.split(' ') as [string, string];
        const path = template.replace(/\{[^}]+\}/g, randomUUID());
        for (const [who, api] of [
          ['license', licenseApi],
          ['machine', machineApi],
        ] as const) {
          if (scopes.includes(who)) continue;
          for (const prefix of ['/api/v1', '/v1']) {
            const response = await api.request(method, prefix + path, method === 'GET' ? undefined : {});
            expect({ route, prefix, who, status: response.status, code: response.body?.code }).toEqual({
              route,
              prefix,
              who,
              status: 403,
              code: 'forbidden',
            });
            cells++;
          }
        }
      }
      expect(cells).toBeGreaterThan(100);
    });
  });

  describe('machine tokens', () => {
    it('acts on its own activation only, and dies with it', async () => {
      const license = await newLicense();
      const { api } = await tokenOf(license.id);
      const first = await api.post('/api/v1/activations', {
        license_key: license.serial,
        fingerprint: 'fp-1',
      });
      const second = await api.post('/api/v1/activations', { license_id: license.id, fingerprint: 'fp-2' });
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(first.body.machine_token).toMatch(/^mt_[A-Za-z0-9_-]{43}$/);
      const [stored] = await sql(`SELECT token_hash FROM license.activations WHERE id = $1`, [first.body.id]);
      expect(stored.token_hash).toBe(createHash('sha256').update(first.body.machine_token).digest('hex'));
      const machine = org.api.withKey(first.body.machine_token as string);

      expect((await machine.post(`/api/v1/activations/${first.body.id}/heartbeat`)).status).toBe(200);
      notFound(await machine.post(`/api/v1/activations/${second.body.id}/heartbeat`));
      notFound(await machine.delete(`/api/v1/activations/${second.body.id}`));
      const validate = (fingerprint: string) =>
        machine.post('/api/v1/licenses/validate', { key: license.serial, fingerprint });
      expect((await validate('fp-1')).body).toMatchObject({
        code: 'VALID',
        activation: { id: first.body.id },
      });
      expect((await validate('fp-2')).body).toMatchObject({ code: 'NO_ACTIVATION', activation: null });
      const sync = (body: Record<string, unknown>) =>
        machine.post('/api/v1/licenses/sync', { license_serial: license.serial, ...body });
      expect((await sync({})).body.status).toBe('ok');
      expect((await sync({ hardware_fingerprint: 'fp-1' })).body.status).toBe('ok');
      expect((await sync({ hardware_fingerprint: 'fp-2' })).body.status).toBe('not_found');
      expect((await machine.get(`/api/v1/licenses/${license.id}`)).status).toBe(403);
      expect(
        (await machine.post('/api/v1/activations', { license_id: license.id, fingerprint: 'x' })).status,
      ).toBe(403);

      expect((await machine.delete(`/api/v1/activations/${first.body.id}`)).status).toBe(200);
      expect((await validate('fp-1')).status).toBe(401);
      expect((await sync({})).status).toBe(401);
    });

    it('dies when its activation lapses and is swept, on the one route that does not read the activation too', async () => {
      const { product } = await productWithKeyPair(org.api, { activation_heartbeat_interval: 1 });
      const license = await createLicense(org.api, { product_id: product.id, max_seats: 2 });
      const { api } = await tokenOf(license.id);
      const activated = await api.post('/api/v1/activations', {
        license_id: license.id,
        fingerprint: 'fp-l',
      });
      const machine = org.api.withKey(activated.body.machine_token as string);
      expect((await machine.post('/api/v1/licenses/sync', { license_serial: license.serial })).status).toBe(
        200,
      );
      await waitFor(
        async () =>
          (await machine.post('/api/v1/licenses/sync', { license_serial: license.serial })).status === 401,
        { what: 'the swept activation to take its machine token with it', timeoutMs: 10_000 },
      );
    });

    it('dies when its lapsed activation is replaced by a new one of the same machine, before any sweep', async () => {
      // A stack whose sweeper never runs during the test: only the new activation removes the lapsed one.
      const unswept = await startStack({ env: { ACTIVATION_SWEEP_MS: '600000' } });
      try {
        const owner = await unswept.newOrganization();
        const { product } = await productWithKeyPair(owner.api, { activation_heartbeat_interval: 1 });
        const license = await createLicense(owner.api, { product_id: product.id, max_seats: 2 });
        const token = await owner.api.post(`/api/v1/licenses/${license.id}/tokens`, {});
        const api = owner.api.withKey(token.body.token as string);
        const first = await api.post('/api/v1/activations', { license_id: license.id, fingerprint: 'fp-r' });
        const machine = owner.api.withKey(first.body.machine_token as string);
        const sync = () => machine.post('/api/v1/licenses/sync', { license_serial: license.serial });
        expect((await sync()).status).toBe(200); // resolved and cached by the gateway
        // Asked without touching it (a heartbeat would keep it alive).
        await waitFor(
          async () =>
            (await api.post('/api/v1/licenses/validate', { key: license.serial, fingerprint: 'fp-r' })).body
              .code === 'HEARTBEAT_DEAD',
          // A heartbeat interval of 1 s plus the grace, counted in whole seconds: under a loaded CI
          // machine 10 s was once not enough.
          { what: 'the activation to lapse', timeoutMs: 20_000 },
        );
        const again = await api.post('/api/v1/activations', { license_id: license.id, fingerprint: 'fp-r' });
        expect(again.status).toBe(201);
        expect(again.body.id).not.toBe(first.body.id);
        await waitFor(async () => (await sync()).status === 401, {
          what: "the lapsed activation's machine token to be refused",
          timeoutMs: 2_000,
        });
      } finally {
        await unswept.close();
      }
    });

    it('is replaced by a new one when the machine activates again; the old one stops working', async () => {
      const license = await newLicense();
      const { api } = await tokenOf(license.id);
      const first = await api.post('/api/v1/activations', { license_id: license.id, fingerprint: 'fp-1' });
      const again = await api.post('/api/v1/activations', { license_id: license.id, fingerprint: 'fp-1' });
      expect([first.status, again.status]).toEqual([201, 200]);
      expect(again.body.id).toBe(first.body.id);
      expect(again.body.machine_token).not.toBe(first.body.machine_token);
      const heartbeat = (token: string) =>
        org.api.withKey(token).post(`/api/v1/activations/${first.body.id}/heartbeat`);
      expect((await heartbeat(again.body.machine_token)).status).toBe(200);
      expect((await heartbeat(first.body.machine_token)).status).toBe(401);
    });

    it('is not issued to a client key, and replays of an idempotent activation never reveal it', async () => {
      const license = await newLicense();
      const byClient = await client.post('/api/v1/activations', {
        license_id: license.id,
        fingerprint: 'fp-c',
      });
      expect(byClient.status).toBe(201);
      expect(byClient.body.machine_token).toBeUndefined();
      const { api } = await tokenOf(license.id);
      const headers = { 'idempotency-key': randomUUID() };
      const body = { license_id: license.id, fingerprint: 'fp-i' };
      const first = await api.post('/api/v1/activations', body, headers);
      const replay = await api.post('/api/v1/activations', body, headers);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body.machine_token).toBe(first.body.machine_token);
    });
  });

  describe('farming and hijacking, replayed', () => {
    it("spends only its own license's activation budget, so naming another license cannot lock its owner out", async () => {
      const victim = await newLicense();
      const { api: attacker } = await tokenOf((await newLicense()).id);
      const { api: owner } = await tokenOf(victim.id);
      // More than the per-license budget (60 an hour), all naming the victim's license.
      for (let i = 0; i < 65; i++) {
        const answer = await attacker.post('/api/v1/activations', {
          license_id: victim.id,
          fingerprint: `x-${i}`,
        });
        if (answer.status === 429) break;
        notFound(answer);
      }
      const activated = await owner.post('/api/v1/activations', {
        license_id: victim.id,
        fingerprint: 'owner',
      });
      expect(activated.status).toBe(201);
    });

    it("never replays, for a license token, an idempotent answer made for another license or for the organization's key", async () => {
      const own = await newLicense();
      const other = await newLicense();
      const { api: ownToken } = await tokenOf(own.id);
      const { api: otherToken } = await tokenOf(other.id);
      const headers = { 'idempotency-key': `shared-${randomUUID()}` };
      const body = { license_id: other.id, fingerprint: 'fp-victim' };
      expect((await otherToken.post('/api/v1/activations', body, headers)).status).toBe(201);
      // The same key and body from another license's token: its own answer (404), not the replay.
      const stolen = await ownToken.post('/api/v1/activations', body, headers);
      expect(stolen.headers.get('idempotent-replayed')).toBeNull();
      notFound(stolen);
      // An organization key's answer is not replayed to a token either: the token gets its machine token.
      const keyHeaders = { 'idempotency-key': `org-${randomUUID()}` };
      const seat = { license_id: own.id, fingerprint: 'fp-own' };
      expect((await client.post('/api/v1/activations', seat, keyHeaders)).status).toBe(201);
      const mine = await ownToken.post('/api/v1/activations', seat, keyHeaders);
      expect(mine.headers.get('idempotent-replayed')).toBeNull();
      expect(mine.body.machine_token).toMatch(/^mt_/);
    });

    it('stops an activate-and-release loop at the cap, online and air-gapped counted together, however the license is named', async () => {
      const license = await newLicense({ max_seats: 1, license_type: 'floating' });
      const outcomes: number[] = [];
      let refused: ApiResponse | undefined;
      for (let round = 0; round < 20 && !refused; round++) {
        let response: ApiResponse;
        if (round % 3 === 0) {
          const request = await createActivationRequest({
            licenseKey: license.serial,
            fingerprint: `air-${round}`,
          });
          response = await client.post('/api/v1/activations/offline', { request: request.request });
          if (response.status === 201) {
            const release = await createActivationRelease(response.body.activation_file, request.machineKey);
            expect((await client.post('/api/v1/activations/offline/release', { release })).status).toBe(200);
          }
        } else {
          const named = round % 3 === 1 ? { license_id: license.id } : { license_key: license.serial };
          response = await client.post('/api/v1/activations', { ...named, fingerprint: `fp-${round}` });
          if (response.status === 201) {
            expect((await client.delete(`/api/v1/activations/${response.body.id}`)).status).toBe(200);
          }
        }
        outcomes.push(response.status);
        if (response.status !== 201) refused = response;
      }
      expect(outcomes).toEqual([...Array(10).fill(201), 429]);
      expect(refused!.body.code).toBe('rate_limited');
      const retryAfter = Number(refused!.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(86_000);
      expect(retryAfter).toBeLessThanOrEqual(86_400);
      // A license token of the same license meets the same cap.
      const { api } = await tokenOf(license.id);
      expect(
        (await api.post('/api/v1/activations', { license_id: license.id, fingerprint: 'fp-t' })).status,
      ).toBe(429);
    });

    it('frees nothing for the holder of a copied activation file: only its release or an admin key frees the seat', async () => {
      const license = await newLicense({ max_seats: 1, license_type: 'floating' });
      const request = await createActivationRequest({
        licenseKey: license.serial,
        fingerprint: 'air-victim',
      });
      const activated = await client.post('/api/v1/activations/offline', { request: request.request });
      expect(activated.status).toBe(201);
      // The file's jti is the activation id: what a copy of the file gives away.
      const [, payload] = (activated.body.activation_file as string).split('.');
      const { jti } = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { jti: string };
      const { api } = await tokenOf(license.id);
      for (const caller of [client, api]) {
        const answer = await caller.delete(`/api/v1/activations/${jti}`);
        expect({ status: answer.status, code: answer.body.code }).toEqual({
          status: 409,
          code: 'offline_activation',
        });
      }
      const taken = await client.post('/api/v1/activations', {
        license_id: license.id,
        fingerprint: 'thief',
      });
      expect(taken.body.code).toBe('seat_limit_reached');

      expect((await org.api.delete(`/api/v1/activations/${jti}`)).status).toBe(200);
      await waitFor(
        async () => {
          const audit = await org.api.get(`/api/v1/audit-events?resource_id=${jti}&action=deleted`);
          return audit.body.total === 1 ? audit.body.audit_events[0] : undefined;
        },
        { what: "the admin's release in the audit log" },
      ).then((entry) => expect(entry.actor.prefix).toBe(org.adminKey.slice(0, 10)));
    });

    it('lives for the checkout TTL of the organization, never the whole license', async () => {
      const other = await stack.newOrganization();
      const { product } = await productWithKeyPair(other.api);
      const license = await createLicense(other.api, { product_id: product.id, valid_days: 365 });
      const patched = await other.api.patch('/api/v1/organizations/current', { checkout_ttl_seconds: 7200 });
      expect(patched.body).toMatchObject({ checkout_ttl_seconds: 7200, client_keys_license_actions: true });
      const request = await createActivationRequest({ licenseKey: license.serial, fingerprint: 'air-ttl' });
      const activated = await other.api.post('/api/v1/activations/offline', {
        request: request.request,
        valid_days: 366,
      });
      expect(activated.status).toBe(201);
      const lifetime = Date.parse(activated.body.expires_at) - Date.now();
      expect(lifetime).toBeLessThanOrEqual(7_200_000);
      expect(lifetime).toBeGreaterThan(7_000_000);
    });

    it('keeps a stranger holding the client key from binding a node-locked license; its token binds it, an admin rebinds it', async () => {
      const license = await newLicense({ license_type: 'node_locked', max_seats: 1 });
      const stranger = await client.post('/api/v1/activations', {
        license_key: license.serial,
        fingerprint: 'attacker',
      });
      expect({ status: stranger.status, code: stranger.body.code }).toEqual({
        status: 403,
        code: 'forbidden',
      });
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.hardware_binding).toBeNull();

      const { api } = await tokenOf(license.id);
      expect(
        (await api.post('/api/v1/activations', { license_id: license.id, fingerprint: 'owner' })).status,
      ).toBe(201);
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.hardware_binding).toEqual({
        fingerprint: 'owner',
      });
      // Once bound, a client key activating the bound machine is fine; another machine is not.
      const bound = await client.post('/api/v1/activations', {
        license_id: license.id,
        fingerprint: 'attacker',
      });
      expect(bound.body.code).toBe('fingerprint_mismatch');

      const rebound = await org.api.patch(`/api/v1/licenses/${license.id}`, {
        hardware_binding: { fingerprint: 'new-machine' },
      });
      expect(rebound.body.hardware_binding).toEqual({ fingerprint: 'new-machine' });
      await waitFor(
        async () =>
          (await org.api.get(`/api/v1/audit-events?resource_id=${license.id}&action=updated`)).body.total >=
          2,
        { what: 'the binding and the rebinding in the audit log' },
      );
    });
  });

  describe('the organization switch', () => {
    it('closes the routes that act on one license to client keys, and only to them', async () => {
      const other = await stack.newOrganization();
      const { product } = await productWithKeyPair(other.api);
      const license = await createLicense(other.api, { product_id: product.id, max_seats: 5 });
      const otherClient = (await apiKeyWithScopes(other.api, ['client'])).api;
      const token = await other.api.post(`/api/v1/licenses/${license.id}/tokens`, {});
      const licenseApi = other.api.withKey(token.body.token as string);
      const seat = await otherClient.post('/api/v1/activations', {
        license_id: license.id,
        fingerprint: 'fp-0',
      });
      expect(seat.status).toBe(201);
      expect((await other.api.get('/api/v1/organizations/current')).body.client_keys_license_actions).toBe(
        true,
      );

      const off = await other.api.patch('/api/v1/organizations/current', {
        client_keys_license_actions: false,
      });
      expect(off.status).toBe(200);
      expect(off.body).toMatchObject({ id: other.id, client_keys_license_actions: false });
      const request = await createActivationRequest({ licenseKey: license.serial, fingerprint: 'air-1' });
      const closed = [
        await otherClient.post('/api/v1/activations', { license_id: license.id, fingerprint: 'fp-1' }),
        await otherClient.post('/api/v1/activations/offline', { request: request.request }),
        await otherClient.post(`/api/v1/activations/${seat.body.id}/heartbeat`),
        await otherClient.delete(`/api/v1/activations/${seat.body.id}`),
        await otherClient.post('/api/v1/licenses/validate', { key: license.serial, fingerprint: 'fp-0' }),
        await otherClient.post('/api/v1/licenses/sync', { license_serial: license.serial }),
        await otherClient.post(`/api/v1/licenses/${license.id}/usage`, { increment: 1 }),
      ];
      expect(closed.map((answer) => `${answer.status} ${answer.body.code}`)).toEqual(
        Array(closed.length).fill('403 forbidden'),
      );
      // What does not act on one license stays open to the client key.
      expect((await otherClient.post('/api/v1/licenses/validate', { key: license.serial })).body.code).toBe(
        'VALID',
      );
      expect(
        (await otherClient.post('/api/v1/licenses/check-revocation', { serials: [license.serial] })).status,
      ).toBe(200);
      // License tokens and admin keys are not affected.
      expect(
        (await licenseApi.post('/api/v1/activations', { license_id: license.id, fingerprint: 'fp-1' }))
          .status,
      ).toBe(201);
      expect(
        (await licenseApi.post('/api/v1/licenses/sync', { license_serial: license.serial })).status,
      ).toBe(200);
      expect((await other.api.post(`/api/v1/activations/${seat.body.id}/heartbeat`)).status).toBe(200);

      const on = await other.api.patch('/api/v1/organizations/current', {
        client_keys_license_actions: true,
      });
      expect(on.body.client_keys_license_actions).toBe(true);
      expect(
        (await otherClient.post('/api/v1/licenses/sync', { license_serial: license.serial })).status,
      ).toBe(200);
      await waitFor(
        async () =>
          (await other.api.get(`/api/v1/audit-events?resource_type=organization&resource_id=${other.id}`))
            .body.total === 2,
        { what: 'both changes of the switch in the audit log' },
      );
    });

    it('refuses settings out of range, and a read key changing them', async () => {
      expect(
        (await org.api.patch('/api/v1/organizations/current', { checkout_ttl_seconds: 60 })).status,
      ).toBe(400);
      expect((await org.api.patch('/api/v1/organizations/current', { nope: true })).status).toBe(400);
      const read = (await apiKeyWithScopes(org.api, ['read'])).api;
      expect(
        (await read.patch('/api/v1/organizations/current', { client_keys_license_actions: false })).status,
      ).toBe(403);
      expect((await read.get('/api/v1/organizations/current')).body.client_keys_license_actions).toBe(true);
    });
  });
});
