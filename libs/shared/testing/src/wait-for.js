// @ts-check
// Plain JavaScript, typed by its JSDoc, so that the process harness (./processes.js) and the
// benchmarks can use it from node without a build.

/**
 * Polls until `probe` answers something other than undefined/false, instead of sleeping for a fixed
 * time and hoping. Fails with the last value seen when the deadline passes.
 * @template T
 * @param {() => Promise<T | undefined | false> | T | undefined | false} probe
 * @param {{ timeoutMs?: number, intervalMs?: number, what?: string }} [options]
 * @returns {Promise<T>}
 */
async function waitFor(probe, { timeoutMs = 10_000, intervalMs = 50, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  /** @type {unknown} */
  let last;
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

module.exports = { waitFor };
