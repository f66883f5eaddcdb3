import { hourMask, splitRange } from './analytics.repository';

const at = (iso: string) => new Date(iso);
const HOUR = 3600_000;

describe('splitRange', () => {
  it('splits a range into its whole units and the partial ones at its ends', () => {
    expect(splitRange(at('2026-03-01T10:30:00Z'), at('2026-03-01T13:15:00Z'), HOUR)).toEqual({
      whole: { from: at('2026-03-01T11:00:00Z'), to: at('2026-03-01T13:00:00Z') },
      partial: [
        { from: at('2026-03-01T10:30:00Z'), to: at('2026-03-01T11:00:00Z') },
        { from: at('2026-03-01T13:00:00Z'), to: at('2026-03-01T13:15:00Z') },
      ],
    });
  });

  it('keeps a range inside one unit whole as its only partial', () => {
    expect(splitRange(at('2026-03-01T10:10:00Z'), at('2026-03-01T10:20:00Z'), HOUR)).toEqual({
      whole: null,
      partial: [{ from: at('2026-03-01T10:10:00Z'), to: at('2026-03-01T10:20:00Z') }],
    });
  });
});

describe('hourMask', () => {
  const day = at('2026-03-01T00:00:00Z');
  const mask = (from: string, to: string) => hourMask(day, { from: at(from), to: at(to) });

  it('sets bit h for each whole hour h of the day in the span', () => {
    expect(mask('2026-03-01T00:00:00Z', '2026-03-01T01:00:00Z')).toBe(0b1);
    expect(mask('2026-03-01T02:00:00Z', '2026-03-01T05:00:00Z')).toBe(0b11100);
    expect(mask('2026-03-01T14:00:00Z', '2026-03-02T00:00:00Z')).toBe(0xffc000);
    expect(mask('2026-03-01T00:00:00Z', '2026-03-02T00:00:00Z')).toBe(0xffffff);
  });
});
