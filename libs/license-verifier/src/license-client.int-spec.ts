import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { LicenseClient, LicenseClientError, StoredActivation } from './license-client';

type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang';

/**
 * The client's timeouts and retries against a real HTTP server on localhost that answers what each
 * test scripts, request by request (the platform itself is exercised in the gateway's end-to-end
 * suite; these are the failure paths it does not produce on demand, and the exact credential each
 * request carries).
 */
describe('LicenseClient retries, timeouts and credentials', () => {
  let server: Server;
  let baseUrl: string;
  let script: Answer[] = [];
  const arrivals: number[] = [];
  /** Each request as the server saw it: the credential it carried, and what it asked. */
  const seen: { method: string; url: string; authorization: string }[] = [];

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      arrivals.push(Date.now());
      seen.push({
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization ?? '',
      });
      request.resume();
      const answer = script.shift() ?? { status: 500 };
      if (answer === 'hang') return;
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      response.end(JSON.stringify(answer.body ?? {}));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    script = [];
    arrivals.length = 0;
    seen.length = 0;
  });

  const client = (options: Partial<ConstructorParameters<typeof LicenseClient>[0]> = {}) =>
    new LicenseClient({ baseUrl, apiKey: 'lk_test', licenseKey: 'LIC-1', retryDelayMs: 50, ...options });
  const results = { results: [{ serial: 'LIC-1', status: 'active' }] };

  it.each([
    ['VALID', 'ok'],
    ['OVERAGE', 'overage'],
    ['REVOKED', 'revoked'],
    ['OVERDUE', 'overdue'],
    ['ENTITLEMENTS_MISSING', 'entitlements_missing'],
    ['COMPONENTS_MISMATCH', 'components_mismatch'],
    ['SOMETHING_NEW', 'unknown'],
    // A relay client's state, never the service's code.
    ['NO_SEATS', 'unknown'],
  ])("reads validate's %s as %s, and runs only on ok and overage", async (code, status) => {
    const runs = status === 'ok' || status === 'overage';
    script = [{ status: 200, body: { valid: runs, code, detail: 'd' } }];
    const state = await client().validate();
    expect(state).toMatchObject({ status, valid: runs, offline: false });
    expect(state.grace_until !== null).toBe(runs);
  });

  it('retries a 5xx with a growing backoff and answers the first success', async () => {
    script = [{ status: 503 }, { status: 502 }, { status: 200, body: results }];
    await expect(client().checkRevocation()).resolves.toEqual(results.results);
    expect(arrivals).toHaveLength(3);
    // Backoffs of 25–50 ms, then 50–100 ms (half fixed, half jitter).
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(20);
    expect(arrivals[2]! - arrivals[1]!).toBeGreaterThanOrEqual(45);
  });

  it('never retries a refusal (4xx other than 429), and reports its problem code', async () => {
    script = [{ status: 403, body: { code: 'forbidden', detail: 'This API key may not' } }];
    const error = await client()
      .checkRevocation()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LicenseClientError);
    expect(error).toMatchObject({
      code: 'forbidden',
      status: 403,
      message: 'This API key may not',
      offline: false,
    });
    expect(arrivals).toHaveLength(1);
  });

  it("waits as long as a 429's Retry-After says before trying again", async () => {
    script = [
      { status: 429, body: { code: 'rate_limited' }, headers: { 'retry-after': '1' } },
      { status: 200, body: results },
    ];
    await expect(client().checkRevocation()).resolves.toEqual(results.results);
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(950);
  });

  it('gives up after the configured retries with the last failure, marked offline', async () => {
    script = [{ status: 503 }, { status: 503 }, { status: 503 }];
    const error = await client({ retries: 2 })
      .checkRevocation()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, offline: true });
    expect(arrivals).toHaveLength(3);
  });

  it('times out an attempt that gets no answer', async () => {
    script = ['hang'];
    const started = Date.now();
    const error = await client({ retries: 0, timeoutMs: 200 })
      .checkRevocation()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'timeout', status: 0, offline: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  describe('with a license token and the machine token of its seat', () => {
    const seat = {
      id: '0190a5b4-1c2d-7e8f-9a0b-1c2d3e4f5a6b',
      license_id: '0190a5b4-0000-7e8f-9a0b-1c2d3e4f5a6b',
      fingerprint: 'machine-a',
      hostname: null,
      platform: null,
      components: null,
      created_at: '2026-01-01T00:00:00.000Z',
      last_heartbeat_at: null,
      expires_at: null,
    };
    const tokenClient = (saved: (StoredActivation | null)[], stored?: StoredActivation) =>
      client({
        apiKey: undefined,
        licenseToken: 'lt_license',
        fingerprint: 'machine-a',
        store: {
          load: () => undefined,
          save: () => undefined,
          loadActivation: () => stored,
          saveActivation: (activation) => void saved.push(activation),
        },
      });

    it('needs exactly one of licenseToken and apiKey', () => {
      const base = { baseUrl, licenseKey: 'LIC-1' };
      expect(() => new LicenseClient(base)).toThrow(/either licenseToken or apiKey/);
      expect(() => new LicenseClient({ ...base, apiKey: 'lk_a', licenseToken: 'lt_b' })).toThrow(TypeError);
      expect(() => new LicenseClient({ ...base, licenseToken: 'lt_b' })).not.toThrow();
    });

    it('keeps the machine token, uses it for the seat, and never shows it', async () => {
      const saved: (StoredActivation | null)[] = [];
      const licensed = tokenClient(saved);
      script = [
        { status: 201, body: { ...seat, machine_token: 'mt_first' } },
        { status: 200, body: seat },
        { status: 200, body: { valid: true, code: 'VALID', detail: 'ok' } },
        { status: 200, body: { status: 'active', message: null } },
        { status: 200, body: { message: 'deleted' } },
      ];
      const activation = await licensed.activate();
      expect(activation).toEqual(seat);
      expect(saved).toEqual([{ license_key: 'LIC-1', activation: seat, machine_token: 'mt_first' }]);
      expect(inspect(licensed, { depth: 5 }) + JSON.stringify(licensed)).not.toContain('mt_first');

      await licensed.heartbeat();
      await licensed.validate();
      await licensed.sync();
      await licensed.deactivate();
      expect(seen.map((r) => `${r.method} ${r.url} ${r.authorization}`)).toEqual([
        'POST /v1/activations Bearer lt_license',
        `POST /v1/activations/${seat.id}/heartbeat Bearer mt_first`,
        'POST /v1/licenses/validate Bearer mt_first',
        'POST /v1/licenses/sync Bearer mt_first',
        `DELETE /v1/activations/${seat.id} Bearer mt_first`,
      ]);
      expect(saved.at(-1)).toBeNull();
    });

    it('drops a machine token refused 401 and asks again with the license token', async () => {
      const saved: (StoredActivation | null)[] = [];
      const licensed = tokenClient(saved);
      script = [
        { status: 201, body: { ...seat, machine_token: 'mt_first' } },
        { status: 401, body: { code: 'unauthorized' } },
        { status: 404, body: { code: 'not_found', detail: 'Activation not found' } },
        { status: 404, body: { code: 'not_found', detail: 'Activation not found' } },
      ];
      await licensed.activate();
      await expect(licensed.heartbeat()).rejects.toMatchObject({ code: 'not_found', status: 404 });
      await expect(licensed.heartbeat()).rejects.toMatchObject({ code: 'not_found', status: 404 });
      expect(seen.map((r) => r.authorization)).toEqual([
        'Bearer lt_license',
        'Bearer mt_first',
        'Bearer lt_license',
        'Bearer lt_license',
      ]);
      expect(saved.at(-1)).toEqual({ license_key: 'LIC-1', activation: seat, machine_token: null });
    });

    it("takes the stored activation and its machine token after a restart, when it is this machine's", async () => {
      const stored = { license_key: 'LIC-1', activation: seat, machine_token: 'mt_stored' };
      script = [{ status: 200, body: seat }];
      await expect(tokenClient([], stored).heartbeat()).resolves.toEqual(seat);
      expect(seen.map((r) => r.authorization)).toEqual(['Bearer mt_stored']);

      const elsewhere = { ...stored, activation: { ...seat, fingerprint: 'machine-b' } };
      const notActivated = { name: 'LicenseClientError', code: 'not_activated', status: 0, offline: false };
      await expect(tokenClient([], elsewhere).heartbeat()).rejects.toMatchObject(notActivated);
      await expect(tokenClient([], { ...stored, license_key: 'LIC-2' }).deactivate()).rejects.toMatchObject(
        notActivated,
      );
      await expect(tokenClient([]).deactivate()).rejects.toBeInstanceOf(LicenseClientError);
      expect(seen).toHaveLength(1);
    });
  });
});
