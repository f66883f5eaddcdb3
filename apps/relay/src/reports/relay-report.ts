// Usage across the air gap: every lease the relay has recorded, in a JWS signed with the relay's
// key, for the vendor to upload to the platform.
import { createPrivateKey, randomUUID } from 'node:crypto';
import { signJws } from '@licensing/license-format';
import type { LeaseRow, RelayStore } from '../store/relay-store';

export const REPORT_TYP = 'relay-report+jws';
/** The most leases one report holds; `--since` continues from where it stopped. */
export const MAX_REPORT_LEASES = 10_000;
/**
 * The most bytes of leases (as JSON) one report holds. The platform takes bodies up to 1 MiB, and
 * the JWS's base64url adds a third: 600,000 bytes of leases stay well under it. About 2,000 leases
 * of the usual size fit; long fingerprints make it fewer.
 */
export const MAX_REPORT_LEASE_BYTES = 600_000;

export interface ReportLease {
  id: string;
  fingerprint: string;
  leased_at: string;
  ended_at: string | null;
  seats_in_use: number;
}

export interface RelayReport {
  v: 1;
  kind: 'relay_report';
  report_id: string;
  relay_file_id: string;
  site: string;
  serial: string;
  product_id: string;
  created_at: string;
  leases: ReportLease[];
}

export interface ExportedReport {
  /** The compact JWS. */
  jws: string;
  report: RelayReport;
  /** Where the next report starts (`--since`), when this one could not hold every lease. */
  next_since: string | null;
}

export class ReportError extends Error {
  override readonly name = 'ReportError';
}

/**
 * Signs a report of the leases started at or after `since` (all of them without it), oldest first:
 * at most `limit` leases and `maxBytes` bytes of them (always one, however long).
 */
export function exportReport(
  store: RelayStore,
  now: number,
  since?: number,
  limit = MAX_REPORT_LEASES,
  maxBytes = MAX_REPORT_LEASE_BYTES,
): ExportedReport {
  const file = store.relayFile();
  if (!file) throw new ReportError('no relay file is loaded: there is nothing to report');
  const identity = store.identity();
  const rows = store.leasesSince(since ?? 0, limit + 1);
  const leases: ReportLease[] = [];
  let bytes = 0;
  for (const row of rows.slice(0, limit)) {
    const lease = reportLease(row, now);
    bytes += Buffer.byteLength(JSON.stringify(lease)) + 1;
    if (bytes > maxBytes && leases.length > 0) break;
    leases.push(lease);
  }
  const next = rows.length > leases.length ? rows[leases.length]! : undefined;
  const report: RelayReport = {
    v: 1,
    kind: 'relay_report',
    report_id: randomUUID(),
    relay_file_id: file.relay_file_id,
    site: identity.site,
    serial: file.serial,
    product_id: file.product_id,
    created_at: new Date(now).toISOString(),
    leases,
  };
  const jws = signJws(
    report,
    { kid: file.relay_file_id, privateKey: createPrivateKey(identity.private_key_pem) },
    REPORT_TYP,
  );
  return { jws, report, next_since: next ? new Date(next.leased_at).toISOString() : null };
}

/** A lease past its lifetime ended when it lapsed, even if no request has marked it yet. */
function reportLease(row: LeaseRow, now: number): ReportLease {
  const ended = row.ended_at ?? (row.expires_at <= now ? row.expires_at : null);
  return {
    id: row.id,
    fingerprint: row.fingerprint,
    leased_at: new Date(row.leased_at).toISOString(),
    ended_at: ended === null ? null : new Date(ended).toISOString(),
    seats_in_use: row.seats_in_use,
  };
}
