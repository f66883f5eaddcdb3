import {
  LicenseStatus,
  REVOCATION_DELTA_TYP,
  REVOCATION_LIST_TYP,
  RevocationDeltaPayload,
  RevocationListEntry,
  RevocationListPayload,
} from '@licensing/contracts';

/** A license as a list sees it: its serial, its stored status and when that status was recorded. */
export interface ListedLicense {
  serial: string;
  status: LicenseStatus;
  changedAt: Date;
}

interface RevocationDocument {
  typ: typeof REVOCATION_LIST_TYP | typeof REVOCATION_DELTA_TYP;
  payload: RevocationListPayload | RevocationDeltaPayload;
}

interface DocumentInput {
  productId: string;
  version: number;
  /** The version the client holds, for a delta; undefined for the full list. */
  since?: number;
  /** Full list: the licenses that are not active. Delta: every license changed after `since`. */
  licenses: ListedLicense[];
  issuedAt: Date;
  nextUpdateSeconds: number;
}

/**
 * The payload of a revocation list or delta. Everything in it but the two times is a function of
 * the version: a license's status and change time only move with a bump of its product's version.
 */
export function revocationDocument(input: DocumentInput): RevocationDocument {
  const { productId, version, since, licenses, issuedAt, nextUpdateSeconds } = input;
  const entries: RevocationListEntry[] = [];
  const removed: { serial: string; at: string }[] = [];
  for (const { serial, status, changedAt } of licenses) {
    const at = changedAt.toISOString();
    if (status === 'active') removed.push({ serial, at });
    else entries.push({ serial, status, at });
  }
  const common = {
    product_id: productId,
    version,
    issued_at: issuedAt.toISOString(),
    next_update: new Date(issuedAt.getTime() + nextUpdateSeconds * 1000).toISOString(),
  };
  if (since === undefined) {
    // A full list never holds an active license; a caller passing one has a bug, not a list.
    if (removed.length > 0) throw new Error('a full revocation list holds only licenses that are not active');
    return { typ: REVOCATION_LIST_TYP, payload: { ...common, entries } };
  }
  return { typ: REVOCATION_DELTA_TYP, payload: { ...common, since, entries, removed } };
}
