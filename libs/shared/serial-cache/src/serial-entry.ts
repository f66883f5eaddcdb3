import { LICENSE_STATUSES, LicenseStatus, SerialStatus } from '@licensing/contracts';

/**
 * The format of a serial's entry in Redis, in one place: how a status is written, how it is read
 * back, and the script that decides whether a write may replace what is there (it reads the
 * entry too). Changing the format means changing this file and nothing else.
 *
 * An entry holds only what an answer needs, as fields joined by `|`:
 * `status|version|revoked_at|valid_until|max_seats|license_id|product_id`, an absent date empty.
 * The serial and the organization are in the key, never in the value: a lookup can only find an
 * entry of the caller's own organization. About 107 bytes, against 317 for the JSON of a
 * SerialStatus: a check of 100 serials reads a third of the bytes and parses no JSON.
 */

/** What a negative entry holds: the organization has no license of that serial. One byte. */
export const NEGATIVE_ENTRY = '-';

const SEPARATOR = '|';
const FIELDS = 7;
const STATUSES: ReadonlySet<string> = new Set(LICENSE_STATUSES);

export function encodeEntry(status: SerialStatus): string {
  return [
    status.status,
    status.version,
    status.revoked_at ?? '',
    status.valid_until ?? '',
    status.max_seats,
    status.license_id,
    status.product_id,
  ].join(SEPARATOR);
}

/**
 * The status an entry of `orgId`'s `serial` holds, or undefined for one that does not parse
 * (a miss, replaced by the next write).
 */
export function decodeEntry(value: string, orgId: string, serial: string): SerialStatus | undefined {
  const fields = value.split(SEPARATOR);
  if (fields.length !== FIELDS) return undefined;
  const [status, version, revokedAt, validUntil, maxSeats, licenseId, productId] = fields as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (!STATUSES.has(status)) return undefined;
  return {
    serial,
    org_id: orgId,
    license_id: licenseId,
    product_id: productId,
    status: status as LicenseStatus,
    revoked_at: revokedAt === '' ? null : revokedAt,
    valid_until: validUntil === '' ? null : validUntil,
    max_seats: Number(maxSeats),
    version: Number(version),
  };
}

/** The script's arguments after the key, in its order: ARGV[1..4]. */
export function putArguments(status: SerialStatus, ttlSeconds: number): [string, number, string, number] {
  return [encodeEntry(status), status.version, status.status, ttlSeconds];
}

/**
 * A write may arrive late (a miss filled from PostgreSQL while a revocation is being written
 * through, an event redelivered after a newer one), so the decision to overwrite is taken inside
 * Redis, atomically: an entry reflecting a newer change stays, and a revocation is final.
 * An unreadable entry is replaced.
 */
export const PUT_SERIAL_STATUS = `
local current = redis.call('GET', KEYS[1])
if current and current ~= '${NEGATIVE_ENTRY}' then
  local status, version = string.match(current, '^([^|]*)|([^|]*)|')
  if status == 'revoked' and ARGV[3] ~= 'revoked' then return 0 end
  version = tonumber(version)
  if version and version > tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
return 1
`;
