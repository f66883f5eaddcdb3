import { LicenseClient, type Activation } from './license-client';

describe('LicenseClient heartbeat timer', () => {
  const NOW = Date.UTC(2026, 0, 1);
  beforeEach(() => jest.useFakeTimers({ now: NOW }));
  afterEach(() => jest.useRealTimers());

  it('beats at half the seat lifetime, at least 1 s apart, and keeps a failed beat', async () => {
    const seat = (lifetimeMs: number): Activation => ({
      id: 'a1',
      license_id: 'l1',
      fingerprint: 'fp',
      hostname: null,
      platform: null,
      components: null,
      created_at: new Date(NOW).toISOString(),
      last_heartbeat_at: null,
      expires_at: new Date(Date.now() + lifetimeMs).toISOString(),
    });
    const answers = [
      () => new Response(JSON.stringify(seat(1_200)), { status: 201 }),
      () => new Response(JSON.stringify({ code: 'heartbeat_dead', detail: 'dead' }), { status: 422 }),
      () => new Response(JSON.stringify(seat(60_000)), { status: 200 }),
      () => new Response(JSON.stringify(seat(60_000)), { status: 200 }),
    ];
    const fetch = jest.fn(async () => answers.shift()!());
    const client = new LicenseClient({
      baseUrl: 'http://service.test',
      apiKey: 'lk_test',
      licenseKey: 'LIC-1',
      fingerprint: 'fp',
      heartbeatIntervalMs: 10_000,
      fetch,
    });
    expect(() => client.startHeartbeat()).toThrow('activate() first');
    await client.activate();
    client.startHeartbeat();
    // 1.2 s left: half is 600 ms, under the 1 s floor.
    await jest.advanceTimersByTimeAsync(999);
    expect(fetch).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(fetch).toHaveBeenCalledTimes(2);
    expect(fetch).toHaveBeenLastCalledWith(
      'http://service.test/v1/activations/a1/heartbeat',
      expect.anything(),
    );
    expect(client.heartbeatError).toMatchObject({ code: 'heartbeat_dead', status: 422 });
    // The seat's expiry has passed: the floor again.
    await jest.advanceTimersByTimeAsync(1_000);
    expect(fetch).toHaveBeenCalledTimes(3);
    expect(client.heartbeatError).toBeUndefined();
    // 60 s left: capped by the 10 s interval.
    await jest.advanceTimersByTimeAsync(9_999);
    expect(fetch).toHaveBeenCalledTimes(3);
    await jest.advanceTimersByTimeAsync(1);
    expect(fetch).toHaveBeenCalledTimes(4);
    client.stopHeartbeat();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(fetch).toHaveBeenCalledTimes(4);
  });
});
