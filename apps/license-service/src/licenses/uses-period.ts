import type { UsesResetPeriod } from '@licensing/contracts';

const DAY_MS = 86_400_000;

/**
 * The start of the usage period that holds `at`, in UTC: 00:00 of its day, of its ISO week's
 * Monday, or of the 1st of its month. Null without a reset: the uses never go back to 0.
 */
export function usesPeriodStart(reset: UsesResetPeriod | null, at: Date): Date | null {
  if (reset === null) return null;
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  switch (reset) {
    case 'day':
      return new Date(day);
    case 'week':
      // getUTCDay: Sunday 0 .. Saturday 6; days since Monday: Monday 0 .. Sunday 6.
      return new Date(day - ((at.getUTCDay() + 6) % 7) * DAY_MS);
    case 'month':
      return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  }
}

/**
 * Whether the uses a license shows were counted before the current period began, and so count as
 * 0 now. `countedSince` is when its count began (null: not recorded, so from before any period).
 */
export function usesAreStale(countedSince: Date | null, periodStart: Date | null): boolean {
  if (periodStart === null) return false;
  return countedSince === null || countedSince < periodStart;
}
