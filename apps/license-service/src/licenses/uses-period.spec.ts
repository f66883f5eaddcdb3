import { usesAreStale, usesPeriodStart } from './uses-period';

const at = (iso: string) => new Date(iso);

describe('usesPeriodStart', () => {
  it('has no period without a reset', () => {
    expect(usesPeriodStart(null, at('2026-11-26T18:00:00.000Z'))).toBeNull();
  });

  it('starts a day at 00:00 UTC, the boundary itself included', () => {
    expect(usesPeriodStart('day', at('2026-11-26T23:59:59.999Z'))).toEqual(at('2026-11-26T00:00:00.000Z'));
    expect(usesPeriodStart('day', at('2026-11-27T00:00:00.000Z'))).toEqual(at('2026-11-27T00:00:00.000Z'));
  });

  it('starts a week on Monday 00:00 UTC (ISO), Sunday being its last day', () => {
    // 2026-11-23 is a Monday, 2026-11-29 a Sunday.
    expect(usesPeriodStart('week', at('2026-11-23T00:00:00.000Z'))).toEqual(at('2026-11-23T00:00:00.000Z'));
    expect(usesPeriodStart('week', at('2026-11-26T12:00:00.000Z'))).toEqual(at('2026-11-23T00:00:00.000Z'));
    expect(usesPeriodStart('week', at('2026-11-29T23:59:59.999Z'))).toEqual(at('2026-11-23T00:00:00.000Z'));
    expect(usesPeriodStart('week', at('2026-11-30T00:00:00.000Z'))).toEqual(at('2026-11-30T00:00:00.000Z'));
  });

  it('starts a week across a month and a year boundary', () => {
    // 2027-01-01 is a Friday: its week began on Monday 2026-12-28.
    expect(usesPeriodStart('week', at('2027-01-01T08:00:00.000Z'))).toEqual(at('2026-12-28T00:00:00.000Z'));
  });

  it('starts a month on the 1st at 00:00 UTC, whatever its length', () => {
    expect(usesPeriodStart('month', at('2026-02-28T23:59:59.999Z'))).toEqual(at('2026-02-01T00:00:00.000Z'));
    expect(usesPeriodStart('month', at('2028-02-29T10:00:00.000Z'))).toEqual(at('2028-02-01T00:00:00.000Z'));
    expect(usesPeriodStart('month', at('2026-12-31T23:59:59.999Z'))).toEqual(at('2026-12-01T00:00:00.000Z'));
    expect(usesPeriodStart('month', at('2027-01-01T00:00:00.000Z'))).toEqual(at('2027-01-01T00:00:00.000Z'));
  });

  it('reads the UTC date, not the local one', () => {
    // 23:30 UTC is already the next day east of UTC; the period stays the UTC one.
    expect(usesPeriodStart('day', at('2026-11-26T23:30:00.000-00:00'))).toEqual(
      at('2026-11-26T00:00:00.000Z'),
    );
    expect(usesPeriodStart('day', at('2026-11-27T01:00:00.000+02:00'))).toEqual(
      at('2026-11-26T00:00:00.000Z'),
    );
  });
});

describe('usesAreStale', () => {
  const start = at('2026-11-01T00:00:00.000Z');

  it('never, without a reset', () => {
    expect(usesAreStale(at('2020-01-01T00:00:00.000Z'), null)).toBe(false);
    expect(usesAreStale(null, null)).toBe(false);
  });

  it('when the count began before the period, or when is not recorded', () => {
    expect(usesAreStale(at('2026-10-31T23:59:59.999Z'), start)).toBe(true);
    expect(usesAreStale(null, start)).toBe(true);
  });

  it('not when the count began at the period start or after', () => {
    expect(usesAreStale(start, start)).toBe(false);
    expect(usesAreStale(at('2026-11-15T00:00:00.000Z'), start)).toBe(false);
  });
});
