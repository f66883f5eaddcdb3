import { connect, createServer, type Server, type Socket } from 'node:net';
import {
  LicenseClient,
  LicenseClientError,
  type LicenseState,
  type StoredActivation,
} from '@licensing/license-verifier';
import { waitFor } from '@licensing/shared/testing';
import { apiKeyWithScopes, createLicense, productWithKeyPair } from './support/fixtures';
import { TestOrganization, TestStack, startStack } from './support/stack';

const DAY_MS = 86_400_000;

/**
 * The application's side of the network, as a customer's application runs it: a TCP relay in
 * front of the gateway stands for the network, and closing it is the outage the client must ride
 * out on its last-known state.
 */
class Relay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: number) {}

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    const address = this.server.address();
    if (typeof address === 'object' && address !== null) this.port = address.port;
  }

  /** Refuses new connections and cuts the open ones (kept-alive fetch connections included). */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('LicenseClient against the running platform', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let clientKey: string;
  /** Its seats lapse 2 s after the last heartbeat. */
  let product: any;
  /** Its seats never lapse, so that a slow step cannot lose one. */
  let steadyProduct: any;
  let relay: Relay;
  let clock: number;

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
    ({ product } = await productWithKeyPair(org.api, { activation_heartbeat_interval: 2 }));
    ({ product: steadyProduct } = await productWithKeyPair(org.api));
    clientKey = (await apiKeyWithScopes(org.api, ['client'])).key.key;
    relay = new Relay(Number(new URL(stack.baseUrl).port));
  }, 60_000);
  beforeEach(async () => {
    clock = Date.now();
    await relay.open();
  });
  afterEach(() => relay.close());
  afterAll(() => stack.close());

  /** A license, and the token its admin creates for the application that runs it. */
  async function licensed(productId: string = product.id): Promise<{ license: any; token: any }> {
    const license = await createLicense(org.api, { product_id: productId, max_seats: 3 });
    const created = await org.api.post(`/api/v1/licenses/${license.id}/tokens`, { name: 'photo-editor' });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^lt_[A-Za-z0-9_-]{43}$/);
    return { license, token: created.body };
  }

  function clientFor(
    { license, token }: { license: any; token?: any },
    options: Partial<ConstructorParameters<typeof LicenseClient>[0]> = {},
  ) {
    return new LicenseClient({
      baseUrl: `http://127.0.0.1:${relay.port}`,
      licenseToken: token?.token,
      licenseKey: license.serial,
      fingerprint: 'machine-a',
      hostname: 'build-01',
      retries: 1,
      retryDelayMs: 20,
      timeoutMs: 2_000,
      offlineGracePeriodMs: 3 * DAY_MS,
      now: () => clock,
      ...options,
    });
  }

  /** A fetch that notes each request and the kind of credential it carried (`lt`, `mt`, `lk`). */
  function recording(log: string[]): typeof fetch {
    return (input, init) => {
      const bearer = new Headers(init?.headers).get('authorization') ?? '';
      const path = new URL(String(input)).pathname.replace(/[0-9a-f-]{36}/, ':id');
      log.push(`${init?.method} ${path} ${bearer.slice('Bearer '.length).slice(0, 2)}`);
      return fetch(input, init);
    };
  }

  /** A store that keeps the activation (and its machine token) in memory, as a file would. */
  function activationStore(saved: (StoredActivation | null)[]) {
    return {
      load: () => undefined,
      save: () => undefined,
      loadActivation: () => saved.at(-1),
      saveActivation: (activation: StoredActivation | null) => void saved.push(activation),
    };
  }

  it('activates with a license token, keeps the seat with timed heartbeats under its machine token, validates and frees the seat', async () => {
    const { license, token } = await licensed();
    const log: string[] = [];
    const saved: (StoredActivation | null)[] = [];
    const client = clientFor(
      { license, token },
      { heartbeatIntervalMs: 60_000, fetch: recording(log), store: activationStore(saved) },
    );
    const activation = await client.activate();
    expect(activation).toMatchObject({
      license_id: license.id,
      fingerprint: 'machine-a',
      hostname: 'build-01',
    });
    // The machine token is the client's: kept in the store, never handed out with the activation.
    expect(activation).not.toHaveProperty('machine_token');
    const machineToken = saved.at(-1)!.machine_token!;
    expect(machineToken).toMatch(/^mt_/);
    expect(saved.at(-1)).toEqual({ license_key: license.serial, activation, machine_token: machineToken });
    expect(await client.validate()).toMatchObject({ valid: true, status: 'ok', offline: false });

    // The product's heartbeat interval is 2 s: the timer beats at half the remaining lifetime.
    client.startHeartbeat();
    const beat = await waitFor(
      async () => {
        const listed = await org.api.get(`/api/v1/activations?license_id=${license.id}`);
        const seat = listed.body.activations[0];
        return seat.last_heartbeat_at !== activation.last_heartbeat_at && seat;
      },
      { what: 'a heartbeat from the timer', timeoutMs: 5_000 },
    );
    expect(Date.parse(beat.expires_at)).toBeGreaterThan(Date.parse(activation.expires_at!));
    expect(client.heartbeatError).toBeUndefined();

    // Checking serials is for API keys: a license token asks validate or sync instead.
    await expect(client.checkRevocation()).rejects.toMatchObject({ code: 'forbidden', status: 403 });
    await client.deactivate();
    expect((await org.api.get(`/api/v1/activations?license_id=${license.id}`)).body.total).toBe(0);
    expect(saved.at(-1)).toBeNull();
    expect(await client.validate()).toMatchObject({ valid: false, status: 'no_activation', offline: false });

    // The machine token died with the seat.
    const machine = org.api.withKey(machineToken);
    expect((await machine.post(`/api/v1/activations/${activation.id}/heartbeat`)).status).toBe(401);
    // The timer beat at least once, every time with the machine token.
    const beats = log.filter((line) => line.includes('/heartbeat'));
    expect(beats.length).toBeGreaterThan(0);
    expect(new Set(beats)).toEqual(new Set(['POST /v1/activations/:id/heartbeat mt']));
    expect(log.filter((line) => !line.includes('/heartbeat'))).toEqual([
      'POST /v1/activations lt',
      'POST /v1/licenses/validate mt',
      'POST /v1/licenses/check-revocation lt',
      'DELETE /v1/activations/:id mt',
      'POST /v1/licenses/validate lt',
    ]);
  });

  it("keeps the seat under the machine token once the license token is revoked, and can't take another", async () => {
    const { license, token } = await licensed(steadyProduct.id);
    const log: string[] = [];
    const client = clientFor({ license, token }, { fetch: recording(log) });
    const activation = await client.activate();

    expect((await org.api.delete(`/api/v1/license-tokens/${token.id}`)).status).toBe(200);
    await expect(client.heartbeat()).resolves.toMatchObject({ id: activation.id });
    expect(await client.validate()).toMatchObject({ valid: true, status: 'ok', offline: false });
    expect(await client.sync({ features_used: ['export'] })).toMatchObject({ valid: true, status: 'ok' });
    // Taking a seat needs the license token, which is gone.
    await expect(client.activate()).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
    await client.deactivate();
    expect((await org.api.get(`/api/v1/activations?license_id=${license.id}`)).body.total).toBe(0);
    expect(log).toEqual([
      'POST /v1/activations lt',
      'POST /v1/activations/:id/heartbeat mt',
      'POST /v1/licenses/validate mt',
      'POST /v1/licenses/sync mt',
      'POST /v1/activations lt',
      'DELETE /v1/activations/:id mt',
    ]);
  });

  it('takes the stored machine token after a restart, and falls back to the license token when it is refused', async () => {
    const { license, token } = await licensed(steadyProduct.id);
    const saved: (StoredActivation | null)[] = [];
    const activation = await clientFor({ license, token }, { store: activationStore(saved) }).activate();
    const first = saved.at(-1)!.machine_token;

    // The next run heartbeats with what the store kept, without activating again.
    const log: string[] = [];
    const restarted = clientFor({ license, token }, { store: activationStore(saved), fetch: recording(log) });
    await expect(restarted.heartbeat()).resolves.toMatchObject({ id: activation.id });
    expect(log).toEqual(['POST /v1/activations/:id/heartbeat mt']);

    // Another activate of this machine gets a new machine token: the one the restarted client
    // holds is refused, so it drops it and asks again with the license token.
    const other: (StoredActivation | null)[] = [];
    const again = clientFor({ license, token }, { store: activationStore(other) });
    expect((await again.activate()).id).toBe(activation.id);
    expect(other.at(-1)!.machine_token).not.toBe(first);
    log.length = 0;
    await expect(restarted.heartbeat()).resolves.toMatchObject({ id: activation.id });
    await restarted.heartbeat();
    expect(log).toEqual([
      'POST /v1/activations/:id/heartbeat mt',
      'POST /v1/activations/:id/heartbeat lt',
      'POST /v1/activations/:id/heartbeat lt',
    ]);
    expect(saved.at(-1)).toMatchObject({ machine_token: null });

    // The seat ends (an admin frees it): the machine token is refused, and the license token's
    // answer is that the seat is gone.
    expect((await org.api.delete(`/api/v1/activations/${activation.id}`)).status).toBe(200);
    await expect(again.heartbeat()).rejects.toMatchObject({ code: 'not_found', status: 404 });
    expect(other.at(-1)).toMatchObject({ machine_token: null });
  });

  it("refuses to act on a license other than its token's", async () => {
    const { token } = await licensed(steadyProduct.id);
    const { license: another } = await licensed(steadyProduct.id);
    const client = clientFor({ license: another, token });
    expect(await client.validate()).toMatchObject({ valid: false, status: 'not_found', offline: false });
    expect(await client.sync()).toMatchObject({ valid: false, status: 'not_found', offline: false });
    await expect(client.activate()).rejects.toMatchObject({ code: 'not_found', status: 404 });
    expect((await org.api.get(`/api/v1/activations?license_id=${another.id}`)).body.total).toBe(0);
  });

  it("still works with the organization's client key, until the organization closes license actions to it", async () => {
    const { license } = await licensed(steadyProduct.id);
    const log: string[] = [];
    const saved: (StoredActivation | null)[] = [];
    const client = clientFor(
      { license },
      { apiKey: clientKey, fetch: recording(log), store: activationStore(saved) },
    );
    await client.activate();
    expect(saved.at(-1)).toMatchObject({ machine_token: null });
    await client.heartbeat();
    expect(await client.validate()).toMatchObject({ valid: true, status: 'ok' });
    expect(await client.checkRevocation()).toEqual([
      { serial: license.serial, status: 'active', revoked_at: null },
    ]);
    await client.deactivate();
    expect(new Set(log.map((line) => line.slice(-2)))).toEqual(new Set(['lk']));

    const closed = await stack.newOrganization();
    const { product: closedProduct } = await productWithKeyPair(closed.api);
    const closedLicense = await createLicense(closed.api, { product_id: closedProduct.id });
    const closedKey = (await apiKeyWithScopes(closed.api, ['client'])).key.key;
    const patched = await closed.api.patch('/api/v1/organizations/current', {
      client_keys_license_actions: false,
    });
    expect(patched.status).toBe(200);
    await expect(
      clientFor({ license: closedLicense }, { apiKey: closedKey }).activate(),
    ).rejects.toMatchObject({ code: 'forbidden', status: 403 });
  });

  it('rides out an outage on the last-known status for the grace period, and no longer', async () => {
    const { license, token } = await licensed();
    const saved: LicenseState[] = [];
    const client = clientFor(
      { license, token },
      { store: { load: () => undefined, save: (s) => void saved.push(s) } },
    );
    const online = await client.sync({ features_used: ['export'] });
    expect(online).toMatchObject({ valid: true, status: 'ok', offline: false });
    expect(saved).toEqual([online]);

    await relay.close();
    clock += 2 * DAY_MS;
    const offline = await client.sync();
    expect(offline).toMatchObject({
      valid: true,
      status: 'ok',
      offline: true,
      checked_at: online.checked_at,
      grace_until: online.grace_until,
    });
    expect(offline.detail).toMatch(/unreachable/);

    clock += 1 * DAY_MS + 1;
    expect(await client.validate()).toMatchObject({ valid: false, status: 'ok', offline: true });

    // Another run of the application, still offline, starts from the stored state.
    const restarted = clientFor(
      { license, token },
      { store: { load: () => saved.at(-1), save: () => undefined } },
    );
    clock = Date.parse(online.checked_at!) + DAY_MS;
    expect(await restarted.validate()).toMatchObject({ valid: true, status: 'ok', offline: true });
    // With nothing known, an offline application is not licensed.
    expect(await clientFor({ license, token }).sync()).toMatchObject({
      valid: false,
      status: 'unknown',
      offline: true,
    });
    await expect(clientFor({ license, token }).activate()).rejects.toMatchObject({
      code: 'network',
      status: 0,
    });
  });

  it('learns of a revocation at the next sync, and an outage after it does not bring the license back', async () => {
    const { license, token } = await licensed();
    const client = clientFor({ license, token });
    expect(await client.sync()).toMatchObject({ valid: true, status: 'ok' });

    expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
    expect(await client.sync()).toMatchObject({
      valid: false,
      status: 'revoked',
      offline: false,
      grace_until: null,
    });

    await relay.close();
    expect(await client.sync()).toMatchObject({ valid: false, status: 'revoked', offline: true });
  });

  it("throws the service's refusals with their code and detail, without retrying them", async () => {
    const { license, token } = await licensed();
    await org.api.patch(`/api/v1/licenses/${license.id}`, { status: 'suspended' });
    const error = await clientFor({ license, token })
      .activate()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LicenseClientError);
    expect(error).toMatchObject({ code: 'license_not_active', status: 422, offline: false });
    expect((error as Error).message).not.toBe('');
    await expect(
      clientFor({ license, token: { token: `lt_${'A'.repeat(43)}` } }).validate(),
    ).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
    await expect(clientFor({ license }, { apiKey: 'lk_wrong' }).validate()).rejects.toMatchObject({
      code: 'unauthorized',
      status: 401,
    });
  });
});
