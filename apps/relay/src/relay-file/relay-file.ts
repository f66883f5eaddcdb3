// Loading a relay file: a license file of the product with one more claim, `relay: {id, site,
// public_key}`, issued to this relay. Every refusal has a stable code; nothing is stored unless
// every check passes.
import { createPublicKey } from 'node:crypto';
import { verifyLicense, type VerifiedLicense } from '@licensing/license-verifier';
import type { RelayFileRow, RelayStore } from '../store/relay-store';
import type { ProductKey } from './product-key';

export type RelayFileErrorCode =
  | 'malformed'
  | 'signature_invalid'
  | 'product_mismatch'
  | 'not_yet_valid'
  | 'file_expired'
  | 'relay_key_mismatch'
  | 'site_mismatch'
  | 'license_mismatch'
  | 'relay_file_replayed';

const MESSAGES: Record<RelayFileErrorCode, string> = {
  malformed: 'The file is not a relay file (a signed license file with a relay claim)',
  signature_invalid: 'The signature does not verify with the product public key',
  product_mismatch: "The file is for another product than the public key's",
  not_yet_valid: 'The license is not valid yet',
  file_expired: 'The relay file has expired: ask the vendor for a new one',
  relay_key_mismatch: "The file was issued to another relay (its relay.public_key is not this relay's key)",
  site_mismatch: "The file was issued for another site than this relay's",
  license_mismatch: 'The file is for another license than the one this relay serves: init a new relay',
  relay_file_replayed: 'The file is older than the relay file already loaded',
};

export class RelayFileError extends Error {
  override readonly name = 'RelayFileError';
  constructor(readonly code: RelayFileErrorCode) {
    super(MESSAGES[code]);
  }
}

/** The relay claim of a relay file. */
export interface RelayClaim {
  id: string;
  site: string;
  public_key: string;
}

/**
 * Verifies a relay file against the product key, this relay's identity and the file already
 * loaded, and returns the row to store. `checkTime` is false only when re-checking the stored
 * file at start: an expired stored file still starts the relay, which then leases nothing.
 */
export async function checkRelayFile(
  input: string,
  store: RelayStore,
  productKey: ProductKey,
  now: number,
  { checkTime = true } = {},
): Promise<RelayFileRow> {
  const result = await verifyLicense(input, productKey.keys, { now, productId: productKey.productId });
  const license = result.license;
  const relay = license && relayClaimOf(license);
  const codes = result.errors.map((error) => error.code);
  if (!license || !relay || codes.includes('malformed') || license.max_seats < 0) {
    throw new RelayFileError('malformed');
  }
  if (codes.includes('signature_invalid') || codes.includes('unknown_key')) {
    throw new RelayFileError('signature_invalid');
  }
  if (codes.includes('product_mismatch')) throw new RelayFileError('product_mismatch');
  if (checkTime) {
    if (codes.includes('expired') || codes.includes('file_expired')) throw new RelayFileError('file_expired');
    if (codes.includes('not_yet_valid')) throw new RelayFileError('not_yet_valid');
  }
  const identity = store.identity();
  if (!sameKey(relay.public_key, identity.public_key_pem)) throw new RelayFileError('relay_key_mismatch');
  if (relay.site !== identity.site) throw new RelayFileError('site_mismatch');

  const issuedAt = Date.parse(license.issued_at);
  const loaded = store.relayFile();
  if (loaded && loaded.relay_file_id !== relay.id) {
    if (loaded.license_id !== license.license_id) throw new RelayFileError('license_mismatch');
    if (issuedAt < loaded.issued_at) throw new RelayFileError('relay_file_replayed');
  }
  const heartbeat = license.policy?.heartbeat_interval_seconds;
  const validUntil = license.valid_until === null ? null : Date.parse(license.valid_until);
  const exp = license.expires_at === null ? null : Date.parse(license.expires_at);
  const ends = [exp, validUntil].filter((end): end is number => end !== null);
  return {
    relay_file_id: relay.id,
    blob: relayFileBlob(input),
    license_id: license.license_id,
    serial: license.serial,
    product_id: license.product_id,
    max_seats: license.max_seats,
    lease_seconds: typeof heartbeat === 'number' && heartbeat > 0 ? heartbeat : null,
    issued_at: issuedAt,
    not_before: Date.parse(license.valid_from),
    expires_at: ends.length === 0 ? null : Math.min(...ends),
    loaded_at: now,
  };
}

/** Loads `input` as the relay file in force (or replaces the one loaded), in one transaction. */
export async function loadRelayFile(
  input: string,
  store: RelayStore,
  productKey: ProductKey,
  now: number,
): Promise<RelayFileRow> {
  const row = await checkRelayFile(input, store, productKey, now);
  store.write(() => {
    // Another process may have loaded a newer file meanwhile.
    const loaded = store.relayFile();
    if (loaded && loaded.relay_file_id !== row.relay_file_id && row.issued_at < loaded.issued_at) {
      throw new RelayFileError('relay_file_replayed');
    }
    store.setRelayFile(row);
    store.see(now);
  });
  return row;
}

function relayClaimOf(license: VerifiedLicense): RelayClaim | undefined {
  const relay = (license.claims as unknown as Record<string, unknown>)['relay'];
  if (typeof relay !== 'object' || relay === null || Array.isArray(relay)) return undefined;
  const { id, site, public_key } = relay as Record<string, unknown>;
  if (typeof id !== 'string' || id === '' || typeof site !== 'string' || typeof public_key !== 'string') {
    return undefined;
  }
  return { id, site, public_key };
}

/** Whether two PEMs hold the same public key, whatever their line breaks. */
function sameKey(pem: string, ownPem: string): boolean {
  try {
    const der = (text: string) => createPublicKey(text.trim()).export({ type: 'spki', format: 'der' });
    return der(pem).equals(der(ownPem));
  } catch {
    return false;
  }
}

/** The stored form of a relay file (base64 of its compact JWS), whichever form it was given in. */
export const relayFileBlob = (input: string): string => Buffer.from(jwsOf(input), 'utf8').toString('base64');

/** The compact JWS of a relay file given as its text or as the API's base64 `relay_file`. */
function jwsOf(input: string): string {
  const trimmed = input.trim();
  if (trimmed.includes('.')) return trimmed;
  return Buffer.from(trimmed.replace(/\s+/g, ''), 'base64').toString('utf8').trim();
}
