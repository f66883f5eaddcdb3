import { Injectable, Logger } from '@nestjs/common';
import { v7 as timeOrderedUuid } from 'uuid';
import {
  CheckRevocationView,
  LicenseStatus,
  RevocationResultView,
  SerialStatus,
  SyncReportDto,
  SyncReportRecord,
  SyncResultView,
  SyncStatus,
  effectiveStatus,
  syncReportSubject,
} from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { CredentialReach } from '@licensing/shared/logging';
import { BusClient } from '@licensing/shared/messaging';
import { Metrics } from '@licensing/shared/metrics';
import { scopedReportId } from './report-ids';
import { SerialStatusesService } from './serial-statuses.service';

const SYNC_MESSAGES: Record<SyncStatus, string> = {
  ok: 'License is valid',
  revoked: 'License has been revoked',
  expired: 'License has expired',
  suspended: 'License is suspended',
  not_found: 'License not found',
};

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
    const found = await this.statuses.lookup(distinct);
    const now = new Date();
    const results = new Array<RevocationResultView>(distinct.length);
    for (let i = 0; i < distinct.length; i++) {
      const serial = distinct[i]!;
      const entry = ownEntry(found.get(serial), orgId);
      results[i] = entry
        ? { serial, status: statusAt(entry, now), revoked_at: entry.revoked_at }
        : { serial, status: 'not_found', revoked_at: null };
    }
    return { results, checked_at: now.toISOString() };
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
      ownEntry((await this.statuses.lookup([serial])).get(serial), orgId),
      dto,
      reach,
    );
    const now = new Date();
    const serverTime = now.toISOString();
    if (!entry) return { status: 'not_found', message: SYNC_MESSAGES.not_found, server_time: serverTime };

    const effective = statusAt(entry, now);
    const status: SyncStatus = effective === 'active' ? 'ok' : effective;
    const seats = dto.seats_in_use ?? null;
    const overused = seats !== null && seats > entry.max_seats;
    const message = overused
      ? `${SYNC_MESSAGES[status]}; ${seats} seats in use exceeds the ${entry.max_seats} allowed`
      : SYNC_MESSAGES[status];

    const record: SyncReportRecord = {
      // Time-ordered: analytics keeps every report_id in a B-tree, where ids that grow with time
      // land on the same few recent pages instead of a random page of a month's ids.
      report_id: dto.report_id === undefined ? timeOrderedUuid() : scopedReportId(orgId, dto.report_id),
      org_id: orgId,
      license_id: entry.license_id,
      product_id: entry.product_id,
      serial,
      // A machine token reports for its own machine, named or not.
      hardware_fingerprint: dto.hardware_fingerprint ?? (reach.kind === 'machine' ? reach.fingerprint : null),
      app_version: dto.app_version ?? null,
      features_used: dto.features_used ?? [],
      seats_in_use: seats,
      status,
      received_at: serverTime,
    };
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

/** Another organization's serial is answered exactly like an unknown one. */
function ownEntry(entry: SerialStatus | undefined, orgId: string): SerialStatus | undefined {
  return entry !== undefined && entry.org_id === orgId ? entry : undefined;
}

/** The entry, if the credential reaches it: its license for a license token, its machine for a machine token. */
function reachableEntry(
  entry: SerialStatus | undefined,
  dto: SyncReportDto,
  reach: CredentialReach,
): SerialStatus | undefined {
  if (entry === undefined || reach.kind === 'organization') return entry;
  if (entry.license_id !== reach.license_id) return undefined;
  if (reach.kind === 'machine' && dto.hardware_fingerprint !== undefined) {
    return dto.hardware_fingerprint === reach.fingerprint ? entry : undefined;
  }
  return entry;
}

function statusAt(entry: SerialStatus, now: Date): LicenseStatus {
  // Only an active license with an end date can have lapsed; skip the Date for every other one.
  if (entry.status !== 'active' || entry.valid_until === null) return entry.status;
  return effectiveStatus({ status: entry.status, validUntil: new Date(entry.valid_until) }, now);
}
