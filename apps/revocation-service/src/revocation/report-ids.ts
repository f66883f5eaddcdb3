import { createHash } from 'node:crypto';

/**
 * The id a client's report is stored and de-duplicated under: its `report_id` scoped to its
 * organization, so that one organization's ids can never suppress another's reports, however
 * their clients choose them (a constant id, the nil UUID). The same organization and id always give
 * the same scoped id, so a retried report is still counted once.
 *
 * The first 48 bits are the client's own: a time-ordered id (UUIDv7, as the SDK makes them) keeps
 * its milliseconds there, which keeps analytics' index of ids writing to its recent pages. The other
 * 80 are a SHA-256 of the organization and the client's id, with the version (8, custom) and the
 * variant bits set.
 */
export function scopedReportId(orgId: string, reportId: string): string {
  const hex = reportId.replace(/-/g, '').toLowerCase();
  const hash = createHash('sha256').update(`${orgId}:${hex}`).digest();
  const bytes = Buffer.alloc(16);
  bytes.write(hex.slice(0, 12), 0, 'hex');
  hash.copy(bytes, 6, 0, 10);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const out = bytes.toString('hex');
  return `${out.slice(0, 8)}-${out.slice(8, 12)}-${out.slice(12, 16)}-${out.slice(16, 20)}-${out.slice(20)}`;
}
