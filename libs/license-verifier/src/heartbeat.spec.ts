import { Heartbeat, type HeartbeatOptions } from './heartbeat';
import { LicenseClientError } from './request';

describe('Heartbeat', () => {
  const NOW = Date.UTC(2026, 0, 1);
  const at = (ms: number) => new Date(NOW + ms).toISOString();

  beforeEach(() => jest.useFakeTimers({ now: NOW }));
  afterEach(() => jest.useRealTimers());

  const heartbeat = (options: Partial<HeartbeatOptions> = {}) =>
    new Heartbeat({
      beat: () => Promise.resolve(),
      expiresAt: () => undefined,
      intervalMs: 60_000,
      floorMs: 500,
      now: Date.now,
      ...options,
    });

  it('waits half the remaining lifetime, within the interval and the floor', () => {
    let expiresAt: string | null | undefined;
    const timer = heartbeat({ expiresAt: () => expiresAt });
    expect(timer.delay()).toBe(60_000);
    expiresAt = null;
    expect(timer.delay()).toBe(60_000);
    expiresAt = 'not a date';
    expect(timer.delay()).toBe(60_000);
    expiresAt = at(30_000);
    expect(timer.delay()).toBe(15_000);
    expiresAt = at(600_000);
    expect(timer.delay()).toBe(60_000);
    expiresAt = at(600);
    expect(timer.delay()).toBe(500);
    // A lapsed seat: the floor, not a busy loop.
    expiresAt = at(-10_000);
    expect(timer.delay()).toBe(500);
  });

  it('beats on the timer, keeps the last failure, and clears it on success', async () => {
    const failure = new LicenseClientError('not_found', 'gone', 404);
    const answers: (() => Promise<void>)[] = [
      () => Promise.reject(failure),
      () => Promise.reject(new Error('boom')),
      () => Promise.resolve(),
    ];
    const beat = jest.fn(() => answers.shift()!());
    const timer = heartbeat({ beat, expiresAt: () => at(2_000) });
    timer.start();
    await jest.advanceTimersByTimeAsync(999);
    expect(beat).toHaveBeenCalledTimes(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(beat).toHaveBeenCalledTimes(1);
    expect(timer.error).toBe(failure);
    // Half of the 1 s left.
    await jest.advanceTimersByTimeAsync(500);
    expect(beat).toHaveBeenCalledTimes(2);
    expect(timer.error).toMatchObject({ code: 'network', message: 'boom', status: 0 });
    await jest.advanceTimersByTimeAsync(500);
    expect(beat).toHaveBeenCalledTimes(3);
    expect(timer.error).toBeUndefined();
    timer.stop();
  });

  it('stops on stop(), and when goOn says so', async () => {
    const beat = jest.fn(() => Promise.resolve());
    const stopped = heartbeat({ beat, intervalMs: 1_000 });
    stopped.start();
    await jest.advanceTimersByTimeAsync(2_000);
    expect(beat).toHaveBeenCalledTimes(2);
    stopped.stop();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(beat).toHaveBeenCalledTimes(2);

    let seat = true;
    const once = jest.fn(() => {
      seat = false;
      return Promise.resolve();
    });
    heartbeat({ beat: once, intervalMs: 1_000, goOn: () => seat }).start();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(once).toHaveBeenCalledTimes(1);
  });

  it('runs one loop when started again while a beat is in flight', async () => {
    let finish: (() => void) | undefined;
    const beat = jest.fn(() => new Promise<void>((resolve) => (finish = resolve)));
    const timer = heartbeat({ beat, intervalMs: 1_000 });
    timer.start();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(beat).toHaveBeenCalledTimes(1);
    timer.start();
    finish!();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(beat).toHaveBeenCalledTimes(2);
    finish!();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(beat).toHaveBeenCalledTimes(3);
    timer.stop();
    finish!();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(beat).toHaveBeenCalledTimes(3);
  });

  it('never keeps a Node process alive', () => {
    const unref = jest.fn();
    const setTimeoutSpy = jest
      .spyOn(globalThis, 'setTimeout')
      .mockReturnValue({ unref } as unknown as ReturnType<typeof setTimeout>);
    try {
      heartbeat().start();
      expect(unref).toHaveBeenCalledTimes(1);
    } finally {
      setTimeoutSpy.mockRestore();
    }
  });
});
