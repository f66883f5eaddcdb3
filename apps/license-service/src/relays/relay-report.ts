import { v5 as nameBasedUuid } from 'uuid';
import {
  RELAY_REPORT_TYP,
  RelayLeaseRecord,
  RelayReportPayload,
  SyncReportRecord,
  SyncStatus,
  effectiveStatus,
} from '@licensing/contracts';
import { DecodedJws, MalformedJwsError, decodeJws } from '@licensing/license-format';
import { DomainError } from '@licensing/shared/errors';
import { validateRecord } from '@licensing/shared/messaging';
import { LicenseEntity } from '../licenses/license.entity';
import { RelayFileEntity } from './relay-file.entity';

/** A relay report taken apart, and its leases as usage records. No I/O. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The usage record id of a lease: the same lease of the same relay file always gives the same id. */
export const leaseReportId = (relayFileId: string, leaseId: string): string =>
  nameBasedUuid(leaseId.toLowerCase(), relayFileId.toLowerCase());

export function invalid(why: string): DomainError {
  return new DomainError('report_signature_invalid', `The relay report is invalid: ${why}`);
}

/** The JWS, if it is shaped as a relay report's: EdDSA, its type, and a relay file id as `kid`. */
export function decodeReport(report: string): DecodedJws {
  let decoded: DecodedJws;
  try {
    decoded = decodeJws(report.trim());
  } catch (error) {
    if (error instanceof MalformedJwsError) throw invalid(error.message);
    throw error;
  }
  const { typ, kid } = decoded.header;
  if (typ !== RELAY_REPORT_TYP) throw invalid(`its typ is not ${RELAY_REPORT_TYP}`);
  if (typeof kid !== 'string' || !UUID.test(kid)) throw invalid('its kid is not a relay file id');
  return { ...decoded, header: { ...decoded.header, kid: kid.toLowerCase() } };
}

/** The verified payload as a relay report, each lease checked too; a report_signature_invalid otherwise. */
export function readRelayReport(payload: unknown): RelayReportPayload {
  const report = validateRecord(RelayReportPayload, payload);
  if ('problem' in report) throw invalid(`the payload is not a relay report (${report.problem})`);
  report.value.leases.forEach((lease, i) => {
    const read = validateRecord(RelayLeaseRecord, lease);
    if ('problem' in read) throw invalid(`lease ${i} is not a lease (${read.problem})`);
  });
  return report.value;
}

/**
 * One usage record per distinct lease: received when the lease began (never later than now, so
 * a relay's clock ahead cannot place usage in the future), for the machine that held it, with the
 * seats in use right after it began. The status is the license's now, as a sync's is.
 */
export function leaseRecords(
  file: RelayFileEntity,
  license: LicenseEntity,
  leases: RelayLeaseRecord[],
  now: Date,
): SyncReportRecord[] {
  const effective = effectiveStatus(license, now);
  const status: SyncStatus = effective === 'active' ? 'ok' : effective;
  const records = new Map<string, SyncReportRecord>();
  for (const lease of leases) {
    const reportId = leaseReportId(file.id, lease.id);
    if (records.has(reportId)) continue;
    const leasedAtMs = Date.parse(lease.leased_at);
    if (!Number.isFinite(leasedAtMs)) throw invalid(`lease ${lease.id} has no readable leased_at`);
    const leasedAt = Math.min(leasedAtMs, now.getTime());
    records.set(reportId, {
      report_id: reportId,
      org_id: file.orgId,
      license_id: license.id,
      product_id: license.productId,
      serial: license.serial,
      hardware_fingerprint: lease.fingerprint,
      app_version: null,
      features_used: [],
      seats_in_use: lease.seats_in_use,
      status,
      received_at: new Date(leasedAt).toISOString(),
    });
  }
  return [...records.values()];
}
