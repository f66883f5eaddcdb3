// Revocation across the air gap: the product's signed revocation list, imported from a file. When
// it names the relay's serial, every lease ends at once and no new one is granted; a newer list
// that no longer names it (a license reinstated) lifts that.
import {
  isRevoked,
  verifyRevocationList,
  type RevocationList,
  type RevocationListErrorCode,
} from '@licensing/license-verifier';
import type { ProductKey } from '../relay-file/product-key';
import type { RelayStore } from '../store/relay-store';

export class RevocationImportError extends Error {
  override readonly name = 'RevocationImportError';
  constructor(
    readonly code: RevocationListErrorCode | 'no_relay_file',
    message: string,
  ) {
    super(message);
  }
}

export interface RevocationImport {
  version: number;
  issued_at: string;
  revoked: boolean;
  /** How many live leases the import ended. */
  leases_ended: number;
}

/** Verifies `jws` and makes it the relay's revocation list, in one transaction. */
export async function importRevocationList(
  jws: string,
  store: RelayStore,
  productKey: ProductKey,
  now: number,
): Promise<RevocationImport> {
  const file = store.relayFile();
  if (!file) throw new RevocationImportError('no_relay_file', 'no relay file is loaded');
  const previousOf = (): RevocationList | undefined => {
    const row = store.revocation();
    return row ? (JSON.parse(row.list) as RevocationList) : undefined;
  };
  const result = await verifyRevocationList(jws, productKey.keys, {
    productId: file.product_id,
    previous: previousOf(),
  });
  if (!result.valid || !result.list) {
    const error = result.errors[0]!;
    throw new RevocationImportError(error.code, error.message);
  }
  const list = result.list;
  return store.write(() => {
    // Another import may have landed since the list was checked.
    const held = store.revocation();
    if (held && held.version > list.version) {
      throw new RevocationImportError('version_regression', 'The list is older than the one held');
    }
    const revoked = isRevoked(list, file.serial);
    let ended = 0;
    if (revoked) {
      store.endLapsed(now);
      ended = store.endAll(now, 'revoked');
    }
    store.setRevocation({
      list: JSON.stringify(list),
      version: list.version,
      revoked: revoked ? 1 : 0,
      revoked_at: revoked ? (held?.revoked === 1 ? held.revoked_at : now) : null,
      imported_at: now,
    });
    return { version: list.version, issued_at: list.issued_at, revoked, leases_ended: ended };
  });
}
