import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, LessThan } from 'typeorm';
import { requestContext } from '@licensing/shared/logging';
import { PRODUCT_SERVICE_CONFIG, ProductServiceConfig } from '../config';
import { isRefusal } from './product-changes';
import { ProductEntity } from './product.entity';
import { ProductsService } from './products.service';

/** A deletion this old has lost its request (a crash, a timeout): finish it here. */
const STALE_AFTER_MS = 60_000;
const BATCH = 100;

/**
 * Finishes deletions that were started and never answered: the process died between marking the
 * product and deleting it, or the license service did not answer. Each is asked again: with the
 * license service's consent the product is deleted, refused it is restored. Replicas may overlap
 * harmlessly: the consent is idempotent and only one of them deletes the row.
 */
@Injectable()
export class ProductDeletions implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ProductDeletions.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  private readonly intervalMs: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly products: ProductsService,
    @Inject(PRODUCT_SERVICE_CONFIG) config: ProductServiceConfig,
  ) {
    this.intervalMs = config.PRODUCT_DELETION_SWEEP_MS;
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      // A pass that fails (the database is down) is tried again at the next tick: it must never
      // reject unhandled, which would end the process.
      this.running ??= this.run()
        .catch((error: unknown) =>
          this.logger.warn({ msg: 'unfinished deletions not checked; retrying', err: String(error) }),
        )
        .finally(() => (this.running = undefined));
    }, this.intervalMs).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass; answers how many deletions were settled (finished or undone). */
  async run(now = new Date()): Promise<number> {
    const stale = await this.dataSource.getRepository(ProductEntity).find({
      where: { deletingSince: LessThan(new Date(now.getTime() - STALE_AFTER_MS)) },
      order: { deletingSince: 'ASC' },
      take: BATCH,
    });
    let settled = 0;
    for (const product of stale) {
      try {
        await requestContext.run({ request_id: randomUUID(), org_id: product.orgId }, () =>
          this.products.finishDeletion(product),
        );
        settled += 1;
      } catch (error) {
        // Refused: the product has licenses and was restored.
        if (isRefusal(error)) settled += 1;
        else
          this.logger.warn({ msg: 'deletion not settled yet', product_id: product.id, err: String(error) });
      }
    }
    return settled;
  }
}
