// The heartbeat timer that the online client and the relay client share. Internal: the package
// index does not export it.
import { asClientError, type LicenseClientError } from './request';

export interface HeartbeatOptions {
  /** One heartbeat. */
  beat: () => Promise<unknown>;
  /** When the seat expires (ISO 8601); none: beat every `intervalMs`. */
  expiresAt: () => string | null | undefined;
  /** The longest wait between two beats. */
  intervalMs: number;
  /** The shortest wait between two beats. */
  floorMs: number;
  now: () => number;
  /** Whether to go on after a beat (default: always). */
  goOn?: () => boolean;
}

/**
 * Beats on a timer until stopped: at half the seat's remaining lifetime, within the interval and
 * the floor. A failed beat is kept in `error` until a beat succeeds. The timer never keeps a Node
 * process alive.
 */
export class Heartbeat {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastError: LicenseClientError | undefined;

  constructor(private readonly options: HeartbeatOptions) {}

  start(): void {
    this.stop();
    const schedule = (): void => {
      const timer = setTimeout(() => {
        this.options
          .beat()
          .then(
            () => (this.lastError = undefined),
            (error: unknown) => (this.lastError = asClientError(error)),
          )
          .finally(() => {
            // Not when stopped, nor when a new start() began another loop meanwhile.
            if (this.timer === timer && (this.options.goOn?.() ?? true)) schedule();
          });
      }, this.delay());
      (timer as { unref?: () => void }).unref?.();
      this.timer = timer;
    };
    schedule();
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The last failed beat, cleared by the next successful one. */
  get error(): LicenseClientError | undefined {
    return this.lastError;
  }

  /** The wait before the next beat. */
  delay(): number {
    const { expiresAt, intervalMs, floorMs, now } = this.options;
    const at = expiresAt();
    const expires = at ? Date.parse(at) : NaN;
    if (Number.isNaN(expires)) return intervalMs;
    return Math.max(floorMs, Math.min(intervalMs, (expires - now()) / 2));
  }
}
