import { isDeepStrictEqual } from 'node:util';
import { AuditChanges } from '@licensing/contracts';

/**
 * Never copied into an audit entry, whatever a caller passes: secrets and signed material. The
 * views given here should not hold them in the first place; this is the second line of defence.
 */
const NEVER_AUDITED = new Set([
  'license_blob',
  'relay_file',
  'jws',
  'key',
  'key_hash',
  'secret',
  'private_key',
  'private_key_ciphertext',
]);
/** Identity and bookkeeping, which the entry already says (resource_id, occurred_at). */
const NOT_A_CHANGE = new Set(['id', 'created_at', 'updated_at']);

type Fields = Record<string, unknown>;

/**
 * The fields that differ between two states of a resource, as `{from, to}`. `before` is null for a
 * creation (every field set, from null) and `after` null for a deletion (every field it had, to
 * null). Values are compared deeply, so an array or object that is equal is not a change.
 */
export function auditChanges(before: object | null, after: object | null): AuditChanges {
  const from = (before ?? {}) as Fields;
  const to = (after ?? {}) as Fields;
  const changes: AuditChanges = {};
  for (const field of new Set([...Object.keys(from), ...Object.keys(to)])) {
    if (NEVER_AUDITED.has(field) || NOT_A_CHANGE.has(field)) continue;
    const change = { from: from[field] ?? null, to: to[field] ?? null };
    if (!isDeepStrictEqual(change.from, change.to)) changes[field] = change;
  }
  return changes;
}
