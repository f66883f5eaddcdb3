import { keysFor, decodeCompactJws, someVerifies } from './jws';
import { importPublicKeys, type PublicKeyInput } from './public-key';

/** A license that is not active, as a product's revocation list names it. */
export interface RevocationEntry {
  serial: string;
  status: 'revoked' | 'suspended' | 'expired';
  /** When the license took that status (ISO 8601). */
  at: string;
}

/** A product's revocation list, verified: store it, and update it with lists or deltas signed later. */
export interface RevocationList {
  product_id: string;
  /** Grows with every change of the product's licenses' statuses; never goes back. */
  version: number;
  issued_at: string;
  /** When the service expects the application to fetch a newer list. */
  next_update: string;
  /** Sorted by serial. */
  entries: RevocationEntry[];
}

export type RevocationListErrorCode =
  | 'malformed'
  | 'unknown_key'
  | 'signature_invalid'
  | 'product_mismatch'
  | 'version_regression'
  | 'version_gap';

export interface RevocationListError {
  code: RevocationListErrorCode;
  message: string;
}

export interface RevocationListResult {
  /** True only when `errors` is empty. */
  valid: boolean;
  /** The list to keep from now on; null unless valid. */
  list: RevocationList | null;
  errors: RevocationListError[];
}

export interface RevocationListOptions {
  /** The product the list must be for. */
  productId?: string;
  /**
   * The list held so far. A full list older than it, or a delta that would take it back, is refused
   * (`version_regression`): an attacker replaying an old list cannot un-revoke a license. A delta
   * needs it, and must start at or before its version (`version_gap` otherwise).
   */
  previous?: RevocationList;
}

const MESSAGES: Record<RevocationListErrorCode, string> = {
  malformed: 'This is not a signed revocation list or delta',
  unknown_key: 'The list was signed by a key pair this key set does not hold',
  signature_invalid: 'The signature does not verify with the key',
  product_mismatch: 'The list belongs to another product',
  version_regression: 'The list is older than the one held',
  version_gap: 'The delta does not start from the list held (fetch the full list)',
};

const LIST_TYP = 'licensing-revocation-list+jwt';
const DELTA_TYP = 'licensing-revocation-delta+jwt';
const STATUSES: readonly string[] = ['revoked', 'suspended', 'expired'];

/**
 * Verifies a product's revocation list, or a delta, with the product's public key (the one that
 * verifies its licenses), and answers the list to keep: the list itself, or the delta applied to
 * `options.previous`. The algorithm comes from the key, never from the document. Rejects (throws)
 * only when the key is unusable; a bad list is a result, not an error.
 */
export async function verifyRevocationList(
  jws: string,
  publicKey: PublicKeyInput,
  options: RevocationListOptions = {},
): Promise<RevocationListResult> {
  const keys = await importPublicKeys(publicKey);
  const decoded = typeof jws === 'string' ? decodeCompactJws(jws.trim()) : undefined;
  const typ = decoded?.header['typ'];
  const document = decoded?.payload && readDocument(decoded.payload, typ === DELTA_TYP);
  if (!decoded || (typ !== LIST_TYP && typ !== DELTA_TYP) || !document) return refused(['malformed']);

  const codes: RevocationListErrorCode[] = [];
  const candidates = keysFor(keys, decoded.header['kid']);
  if (candidates.length === 0) codes.push('unknown_key');
  else if (!(await someVerifies(decoded, candidates))) codes.push('signature_invalid');
  const { previous, productId } = options;
  if (productId !== undefined && document.product_id !== productId) codes.push('product_mismatch');
  if (previous && previous.product_id !== document.product_id) codes.push('product_mismatch');
  if (previous && document.version < previous.version) codes.push('version_regression');
  if (document.since !== undefined && (!previous || document.since > previous.version))
    codes.push('version_gap');
  if (codes.length > 0) return refused([...new Set(codes)]);

  const list: RevocationList = {
    product_id: document.product_id,
    version: document.version,
    issued_at: document.issued_at,
    next_update: document.next_update,
    entries: document.since === undefined ? document.entries : applyDelta(previous!, document),
  };
  return { valid: true, list: sorted(list), errors: [] };
}

/** The entry of a license (or serial) in the list: undefined when the list does not name it. */
export function revocationEntry(
  list: RevocationList,
  license: string | { serial: string },
): RevocationEntry | undefined {
  const serial = typeof license === 'string' ? license : license.serial;
  return indexOf(list).get(serial);
}

/** Whether the list names the license as revoked, suspended or expired: it must not run. */
export const isRevoked = (list: RevocationList, license: string | { serial: string }): boolean =>
  revocationEntry(list, license) !== undefined;

/** Whether the list is past its `next_update`: still the best knowledge offline, but time to fetch. */
export function isStale(list: RevocationList, now: Date | number = Date.now()): boolean {
  return Date.parse(list.next_update) < (typeof now === 'number' ? now : now.getTime());
}

interface Document extends RevocationList {
  since?: number;
  removed: string[];
}

function readDocument(payload: Record<string, unknown>, delta: boolean): Document | undefined {
  const { product_id, version, issued_at, next_update, entries, since, removed } = payload;
  if (typeof product_id !== 'string' || !isVersion(version)) return undefined;
  if (!isTime(issued_at) || !isTime(next_update) || !Array.isArray(entries)) return undefined;
  if (!entries.every(isEntry)) return undefined;
  const document: Document = { product_id, version, issued_at, next_update, entries, removed: [] };
  if (!delta) return since === undefined && removed === undefined ? document : undefined;
  if (!isVersion(since) || since > version || !Array.isArray(removed)) return undefined;
  if (!removed.every((item) => isObject(item) && typeof item['serial'] === 'string')) return undefined;
  return { ...document, since, removed: removed.map((item) => (item as { serial: string }).serial) };
}

function applyDelta(previous: RevocationList, delta: Document): RevocationEntry[] {
  const bySerial = new Map(previous.entries.map((entry) => [entry.serial, entry]));
  for (const serial of delta.removed) bySerial.delete(serial);
  for (const entry of delta.entries) bySerial.set(entry.serial, entry);
  return [...bySerial.values()];
}

function sorted(list: RevocationList): RevocationList {
  const entries = list.entries.map(({ serial, status, at }) => ({ serial, status, at }));
  entries.sort((a, b) => (a.serial < b.serial ? -1 : a.serial > b.serial ? 1 : 0));
  return { ...list, entries };
}

const indexes = new WeakMap<RevocationList, Map<string, RevocationEntry>>();

function indexOf(list: RevocationList): Map<string, RevocationEntry> {
  let index = indexes.get(list);
  if (!index) {
    index = new Map(list.entries.map((entry) => [entry.serial, entry]));
    indexes.set(list, index);
  }
  return index;
}

const refused = (codes: RevocationListErrorCode[]): RevocationListResult => ({
  valid: false,
  list: null,
  errors: codes.map((code) => ({ code, message: MESSAGES[code] })),
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isVersion = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isTime = (value: unknown): value is string =>
  typeof value === 'string' && !Number.isNaN(Date.parse(value));
const isEntry = (value: unknown): value is RevocationEntry =>
  isObject(value) &&
  typeof value['serial'] === 'string' &&
  STATUSES.includes(value['status'] as string) &&
  isTime(value['at']);
