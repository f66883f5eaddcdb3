/**
 * A warning for a failure that repeats on every request while it lasts (an outage): one line per
 * interval is enough, and that line says how many it stands for.
 */
export class ThrottledWarning {
  private lastAt = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: { warn(message: unknown): void },
    private readonly everyMs = 10_000,
  ) {}

  warn(fields: Record<string, unknown>): void {
    const now = Date.now();
    if (now - this.lastAt < this.everyMs) {
      this.suppressed++;
      return;
    }
    this.logger.warn({ ...fields, suppressed: this.suppressed });
    this.lastAt = now;
    this.suppressed = 0;
  }
}
