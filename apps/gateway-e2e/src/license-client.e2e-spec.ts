import { connect, createServer, type Server, type Socket } from 'node:net';
import { LicenseClient, LicenseClientError, type LicenseState } from '@licensing/license-verifier';
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
  let product: any;
  let relay: Relay;
  let clock: number;

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
    ({ product } = await productWithKeyPair(org.api, { activation_heartbeat_interval: 2 }));
    clientKey = (await apiKeyWithScopes(org.api, ['client'])).key.key;
    relay = new Relay(Number(new URL(stack.baseUrl).port));
  }, 60_000);
  beforeEach(async () => {
    clock = Date.now();
    await relay.open();
  });
  afterEach(() => relay.close());
  afterAll(() => stack.close());

  function clientFor(license: any, options: Partial<ConstructorParameters<typeof LicenseClient>[0]> = {}) {
    return new LicenseClient({
      baseUrl: `http://127.0.0.1:${relay.port}`,
      apiKey: clientKey,
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

  it('activates, keeps the seat with timed heartbeats, validates, checks revocation and frees the seat', async () => {
    const license = await createLicense(org.api, { product_id: product.id });
    const client = clientFor(license, { heartbeatIntervalMs: 60_000 });
    const activation = await client.activate();
    expect(activation).toMatchObject({
      license_id: license.id,
      fingerprint: 'machine-a',
      hostname: 'build-01',
    });
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

    expect(await client.checkRevocation()).toEqual([
      { serial: license.serial, status: 'active', revoked_at: null },
    ]);
    await client.deactivate();
    expect((await org.api.get(`/api/v1/activations?license_id=${license.id}`)).body.total).toBe(0);
    expect(await client.validate()).toMatchObject({ valid: false, status: 'no_activation', offline: false });
  });

  it('rides out an outage on the last-known status for the grace period, and no longer', async () => {
    const license = await createLicense(org.api, { product_id: product.id });
    const saved: LicenseState[] = [];
    const client = clientFor(license, { store: { load: () => undefined, save: (s) => void saved.push(s) } });
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
    const restarted = clientFor(license, { store: { load: () => saved.at(-1), save: () => undefined } });
    clock = Date.parse(online.checked_at!) + DAY_MS;
    expect(await restarted.validate()).toMatchObject({ valid: true, status: 'ok', offline: true });
    // With nothing known, an offline application is not licensed.
    expect(await clientFor(license).sync()).toMatchObject({ valid: false, status: 'unknown', offline: true });
    await expect(client.checkRevocation()).rejects.toMatchObject({ code: 'network', status: 0 });
  });

  it('learns of a revocation at the next sync, and an outage after it does not bring the license back', async () => {
    const license = await createLicense(org.api, { product_id: product.id });
    const client = clientFor(license);
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
    const license = await createLicense(org.api, { product_id: product.id });
    await org.api.patch(`/api/v1/licenses/${license.id}`, { status: 'suspended' });
    const error = await clientFor(license)
      .activate()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LicenseClientError);
    expect(error).toMatchObject({ code: 'license_not_active', status: 422, offline: false });
    expect((error as Error).message).not.toBe('');
    await expect(clientFor(license, { apiKey: 'lk_wrong' }).validate()).rejects.toMatchObject({
      code: 'unauthorized',
      status: 401,
    });
  });
});
