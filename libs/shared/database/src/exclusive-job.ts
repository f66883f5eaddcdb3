import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

/**
 * Periodic work that exactly one replica does at a time (expiry sweeps and the like). Each pass runs
 * in a transaction holding a PostgreSQL advisory lock named after the job; a replica that does not
 * get the lock skips the pass. A pass that handled a full batch runs again at once.
 */
export abstract class ExclusiveJob implements OnApplicationBootstrap, OnApplicationShutdown {
  protected abstract readonly name: string;
  protected abstract readonly intervalMs: number;
  protected readonly batchSize: number = 500;
  private readonly logger = new Logger(ExclusiveJob.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(protected readonly dataSource: DataSource) {}

  /** One pass over at most `batchSize` items; answers how many it handled. */
  protected abstract pass(manager: EntityManager, now: Date): Promise<number>;

  onApplicationBootstrap(): void {
    this.schedule(this.intervalMs);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Runs one pass now unless another replica holds the lock (then answers 0). */
  run(): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const [{ locked }] = (await manager.query('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked', [
        `job:${this.name}`,
      ])) as [{ locked: boolean }];
      return locked ? this.pass(manager, new Date()) : 0;
    });
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.run().then(
        (handled) => this.schedule(handled >= this.batchSize ? 0 : this.intervalMs),
        (error: unknown) => {
          this.logger.warn({ msg: `${this.name} failed; retrying`, err: String(error) });
          this.schedule(this.intervalMs);
        },
      );
    }, delayMs);
    this.timer.unref();
  }
}
