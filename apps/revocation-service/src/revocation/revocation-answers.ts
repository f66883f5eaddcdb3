import { v7 as timeOrderedUuid } from 'uuid';
import {
  LicenseStatus,
  RevocationResultView,
  SerialStatus,
  SyncReportDto,
  SyncReportRecord,
  SyncStatus,
  effectiveStatus,
} from '@licensing/contracts';
import { CredentialReach } from '@licensing/shared/logging';
import { scopedReportId } from './report-ids';

/** The answers of check-revocation and sync, built from the cached serial statuses. No I/O. */

const SYNC_MESSAGES: Record<SyncStatus, string> = {
  ok: 'License is valid',
  revoked: 'License has been revoked',
  expired: 'License has expired',
  suspended: 'License is suspended',
  not_found: 'License not found',
};

/** Another organization's serial is answered exactly like an unknown one. */
export function ownEntry(entry: SerialStatus | undefined, orgId: string): SerialStatus | undefined {
  return entry !== undefined && entry.org_id === orgId ? entry : undefined;
}

/** The entry, if the credential reaches it: its license for a license token, its machine for a machine token. */
export function reachableEntry(
  entry: SerialStatus | undefined,
  dto: Pick<SyncReportDto, 'hardware_fingerprint'>,
  reach: CredentialReach,
): SerialStatus | undefined {
  if (entry === undefined || reach.kind === 'organization') return entry;
  if (entry.license_id !== reach.license_id) return undefined;
  if (reach.kind === 'machine' && dto.hardware_fingerprint !== undefined) {
    return dto.hardware_fingerprint === reach.fingerprint ? entry : undefined;
  }
  return entry;
}

/** The status now: an active license past its end is expired, even before the sweep says so. */
export function statusAt(entry: SerialStatus, now: Date): LicenseStatus {
  // Only an active license with an end date can have lapsed; skip the Date for every other one.
  if (entry.status !== 'active' || entry.valid_until === null) return entry.status;
  return effectiveStatus({ status: entry.status, validUntil: new Date(entry.valid_until) }, now);
}

/** One result per serial, in their order. Serials the organization does not own are `not_found`. */
export function revocationResults(
  serials: readonly string[],
  found: ReadonlyMap<string, SerialStatus>,
  orgId: string,
  now: Date,
): RevocationResultView[] {
  return serials.map((serial) => {
    const entry = ownEntry(found.get(serial), orgId);
    return entry
      ? { serial, status: statusAt(entry, now), revoked_at: entry.revoked_at }
      : { serial, status: 'not_found', revoked_at: null };
  });
}

/** What a sync report is answered: the license's status, and a word on seats over the limit. */
export function syncAnswer(
  entry: SerialStatus | undefined,
  seatsInUse: number | null,
  now: Date,
): { status: SyncStatus; message: string } {
  if (!entry) return { status: 'not_found', message: SYNC_MESSAGES.not_found };
  const effective = statusAt(entry, now);
  const status: SyncStatus = effective === 'active' ? 'ok' : effective;
  const overused = seatsInUse !== null && seatsInUse > entry.max_seats;
  const message = overused
    ? `${SYNC_MESSAGES[status]}; ${seatsInUse} seats in use exceeds the ${entry.max_seats} allowed`
    : SYNC_MESSAGES[status];
  return { status, message };
}

/** The report as analytics stores it, from a report whose license the caller reaches. */
export function syncRecord(
  orgId: string,
  entry: SerialStatus,
  dto: SyncReportDto,
  reach: CredentialReach,
  status: SyncStatus,
  receivedAt: string,
): SyncReportRecord {
  return {
    // Time-ordered: analytics keeps every report_id in a B-tree, where ids that grow with time
    // land on the same few recent pages instead of a random page of a month's ids.
    report_id: dto.report_id === undefined ? timeOrderedUuid() : scopedReportId(orgId, dto.report_id),
    org_id: orgId,
    license_id: entry.license_id,
    product_id: entry.product_id,
    serial: dto.license_serial,
    // A machine token reports for its own machine, named or not.
    hardware_fingerprint: dto.hardware_fingerprint ?? (reach.kind === 'machine' ? reach.fingerprint : null),
    app_version: dto.app_version ?? null,
    features_used: dto.features_used ?? [],
    seats_in_use: dto.seats_in_use ?? null,
    status,
    received_at: receivedAt,
  };
}
