import {
  CheckRevocationDto,
  CheckRevocationView,
  SerialStatusPutDto,
  Messages,
  SyncReportDto,
  SyncResultView,
} from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { CredentialReach } from '@licensing/shared/logging';
import { BusController, BusData, BusOrg, BusReach, Handles } from '@licensing/shared/messaging';
import { SerialStatusCache } from '@licensing/shared/serial-cache';
import { RevocationService } from './revocation.service';

@BusController()
export class RevocationController {
  constructor(
    private readonly revocation: RevocationService,
    private readonly cache: SerialStatusCache,
  ) {}

  @Handles(Messages.revocation.check)
  check(@BusOrg() orgId: string, @BusData() { serials }: CheckRevocationDto): Promise<CheckRevocationView> {
    return this.revocation.check(orgId, serials);
  }

  @Handles(Messages.revocation.sync)
  sync(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() dto: SyncReportDto,
  ): Promise<SyncResultView> {
    return this.revocation.sync(orgId, dto, reach);
  }

  /**
   * Internal writes from the license service (a change written through, a verify miss filled), not
   * on behalf of an organization. Unlike a read, it cannot fall back: an `unavailable` makes the
   * license service's caller retry, rather than a change answered while an older status may still
   * be served from the cache (a fill ignores it).
   */
  @Handles(Messages.revocation.put)
  async put(@BusData() { statuses }: SerialStatusPutDto): Promise<{ ok: true }> {
    try {
      await this.cache.putMany(statuses);
    } catch {
      throw new DomainError('unavailable', 'The revocation cache is unavailable; retry later');
    }
    return { ok: true };
  }
}
