export interface RetrySchedule {
  /** Ceiling of the delay before the first retry. */
  baseMs: number;
  /** Largest ceiling. */
  maxMs: number;
  maxAttempts: number;
}

/** The ceiling of the delay after `attempt` failed attempts (1-based): base × 2^(attempt−1), capped. */
export function retryCeilingMs(attempt: number, schedule: RetrySchedule): number {
  return Math.min(schedule.maxMs, schedule.baseMs * 2 ** Math.max(0, attempt - 1));
}

/**
 * Exponential backoff with full jitter: after `attempt` failures, a delay drawn uniformly from
 * [0, ceiling), so that many deliveries failing together (a receiver down) do not come back
 * together. Undefined once the attempts are spent: the delivery has failed.
 */
export function retryDelayMs(
  attempt: number,
  schedule: RetrySchedule,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= schedule.maxAttempts) return undefined;
  return Math.floor(random() * retryCeilingMs(attempt, schedule));
}
