import { Injectable, Logger } from '@nestjs/common';
import { CheckRevocationView, SyncReportDto, SyncResultView, syncReportSubject } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { CredentialReach } from '@licensing/shared/logging';
import { BusClient } from '@licensing/shared/messaging';
import { Metrics } from '@licensing/shared/metrics';
import { ownEntry, reachableEntry, revocationResults, syncAnswer, syncRecord } from './revocation-answers';
import { SerialStatusesService } from './serial-statuses.service';

/** Check-revocation and sync intake, for the caller's organization only. */
@Injectable()
export class RevocationService {
  private readonly logger = new Logger(RevocationService.name);

  constructor(
    private readonly statuses: SerialStatusesService,
    private readonly bus: BusClient,
  ) {}

  async check(orgId: string, serials: string[]): Promise<CheckRevocationView> {
    // A Set keeps insertion order: results follow each serial's first appearance.
    const distinct = [...new Set(serials)];
    const found = await this.statuses.lookup(orgId, distinct);
    const now = new Date();
    return { results: revocationResults(distinct, found, orgId, now), checked_at: now.toISOString() };
  }

  /**
   * Answers only once JetStream has stored the report: a 200 means the report will reach analytics.
   * The client's report_id, scoped to its organization (`scopedReportId`), is the Nats-Msg-Id and
   * analytics' key, so a retried report is stored once and another organization's never collides. A license token
   * reports for its own serial only, a machine token for its own machine: anything else is answered
   * `not_found` and not stored, as another organization's serial is.
   */
  async sync(orgId: string, dto: SyncReportDto, reach: CredentialReach): Promise<SyncResultView> {
    const serial = dto.license_serial;
    const entry = reachableEntry(
      ownEntry((await this.statuses.lookup(orgId, [serial])).get(serial), orgId),
      dto,
      reach,
    );
    const now = new Date();
    const serverTime = now.toISOString();
    const { status, message } = syncAnswer(entry, dto.seats_in_use ?? null, now);
    if (!entry) return { status, message, server_time: serverTime };

    const record = syncRecord(orgId, entry, dto, reach, status, serverTime);
    try {
      await this.bus.publishDurable(syncReportSubject(orgId), JSON.stringify(record), record.report_id);
    } catch (error) {
      this.logger.warn({ msg: 'sync report not stored', report_id: record.report_id, err: String(error) });
      throw new DomainError('unavailable', 'The report could not be stored; retry later');
    }
    Metrics.syncs.inc({ status });
    return { status, message, server_time: serverTime };
  }
}
