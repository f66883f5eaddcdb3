/**
 * Polls until `probe` answers something other than undefined/false, instead of sleeping for a fixed
 * time and hoping. Fails with the last value seen when the deadline passes.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 10_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}; last: ${String(last)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
