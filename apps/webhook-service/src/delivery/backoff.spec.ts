import { retryCeilingMs, retryDelayMs } from './backoff';

const production = { baseMs: 60_000, maxMs: 12 * 3_600_000, maxAttempts: 14 };

describe('the retry schedule', () => {
  it('doubles the ceiling from a minute up to twelve hours', () => {
    const ceilings = Array.from({ length: 13 }, (_, i) => retryCeilingMs(i + 1, production) / 60_000);
    expect(ceilings).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 720, 720, 720]);
  });

  it('spreads retries over about a day: 13 retries whose expected total is a little over a day', () => {
    let ceilings = 0;
    for (let attempt = 1; attempt < production.maxAttempts; attempt++)
      ceilings += retryCeilingMs(attempt, production);
    const expectedHours = ceilings / 2 / 3_600_000;
    expect(expectedHours).toBeGreaterThan(20);
    expect(expectedHours).toBeLessThan(30);
  });

  it('draws each delay uniformly below its ceiling (full jitter)', () => {
    expect(retryDelayMs(3, production, () => 0)).toBe(0);
    expect(retryDelayMs(3, production, () => 0.5)).toBe(120_000);
    expect(retryDelayMs(3, production, () => 0.999_999)).toBeLessThan(240_000);
  });

  it('has no delay once the attempts are spent: the delivery fails', () => {
    expect(retryDelayMs(13, production)).toBeDefined();
    expect(retryDelayMs(14, production)).toBeUndefined();
  });
});
