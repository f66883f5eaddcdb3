import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { SerialStatus, Messages } from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { Metrics } from '@licensing/shared/metrics';

const hits = Metrics.revocationCacheLookups.labels('hit');
const missCount = Metrics.revocationCacheLookups.labels('miss');
const unavailable = Metrics.revocationCacheLookups.labels('unavailable');
import { SerialStatusCache } from '@licensing/shared/serial-cache';

/**
 * The stored status of a batch of an organization's serials: one MGET, then one request to the
 * license service for every miss, whose answers go back into the cache. With Redis down
 * everything is asked of the license service: slower, never wrong.
 */
@Injectable()
export class SerialStatusesService implements BeforeApplicationShutdown {
  private readonly fills = new Set<Promise<unknown>>();

  constructor(
    private readonly cache: SerialStatusCache,
    private readonly bus: BusClient,
  ) {}

  /**
   * `serials` must be distinct. Serials the organization has no license of are absent from the map.
   */
  async lookup(orgId: string, serials: readonly string[]): Promise<Map<string, SerialStatus>> {
    const found = new Map<string, SerialStatus>();
    let misses: readonly string[];
    let cacheUp = true;
    try {
      const cached = await this.cache.getMany(orgId, serials);
      for (const hit of cached.hits) found.set(hit.serial, hit);
      misses = cached.misses;
      hits.inc(serials.length - misses.length);
      missCount.inc(misses.length);
    } catch {
      // Logged by the cache; fall through to the license service for the whole batch.
      cacheUp = false;
      misses = serials;
      unavailable.inc(serials.length);
    }
    if (misses.length === 0) return found;

    // The license service answers for any organization: another one's serial is unknown here,
    // though its entry is worth caching under its own organization.
    const stored = await this.bus.send(Messages.license.statuses, { serials: misses });
    for (const status of stored) if (status.org_id === orgId) found.set(status.serial, status);
    if (cacheUp) {
      const unknown = misses.filter((serial) => !found.has(serial));
      this.fill(stored, orgId, unknown);
    }
    return found;
  }

  /** After the answer, not before it: a caller never waits for the cache to be written. */
  private fill(stored: SerialStatus[], orgId: string, unknown: string[]): void {
    const fill = this.cache
      .put(stored, orgId, unknown)
      .catch(() => undefined) // logged by the cache; the next miss fills it
      .finally(() => this.fills.delete(fill));
    this.fills.add(fill);
  }

  /** Lets fills in flight reach Redis before the cache's connection is closed. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.fills);
  }
}
