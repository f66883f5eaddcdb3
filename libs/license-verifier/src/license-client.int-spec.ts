import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { LicenseClient, LicenseClientError } from './license-client';

type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang';

/**
 * The client's timeouts and retries against a real HTTP server on localhost that answers what each
 * test scripts, request by request (the platform itself is exercised in the gateway's end-to-end
 * suite; these are the failure paths it does not produce on demand).
 */
describe('LicenseClient retries and timeouts', () => {
  let server: Server;
  let baseUrl: string;
  let script: Answer[] = [];
  const arrivals: number[] = [];

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      arrivals.push(Date.now());
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
  });

  const client = (options: Partial<ConstructorParameters<typeof LicenseClient>[0]> = {}) =>
    new LicenseClient({ baseUrl, apiKey: 'lk_test', licenseKey: 'LIC-1', retryDelayMs: 50, ...options });
  const results = { results: [{ serial: 'LIC-1', status: 'active' }] };

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
});
