import { validate, version } from 'uuid';
import { timeOrderedUuid } from './license-client';

describe('timeOrderedUuid', () => {
  it('makes version-7 UUIDs whose first 48 bits are the time in milliseconds', () => {
    const at = Date.UTC(2026, 10, 23, 12, 34, 56, 789);
    const id = timeOrderedUuid(at);
    expect(validate(id)).toBe(true);
    expect(version(id)).toBe(7);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
    expect(id[19]).toMatch(/[89ab]/);
  });

  it('sorts by time, and differs within one millisecond', () => {
    const ids = [1, 2, 3, 1000, 60_000].map((ms) => timeOrderedUuid(Date.UTC(2026, 0, 1) + ms));
    expect([...ids].sort()).toEqual(ids);
    expect(timeOrderedUuid(0)).not.toBe(timeOrderedUuid(0));
  });
});
