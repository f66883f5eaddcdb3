import { SerialStatus } from '@licensing/contracts';

/**
 * The format of a serial's entry in Redis, in one place: how a status is written, how it is read
 * back, and the script that decides whether a write may replace what is there (it reads the
 * entry too). Changing the format means changing this file and nothing else.
 */

/** What a negative entry holds: never valid JSON of a SerialStatus, and one byte. */
export const NEGATIVE_ENTRY = '-';

export function encodeEntry(status: SerialStatus): string {
  return JSON.stringify(status);
}

/** The status an entry holds, or undefined for one that does not parse (a miss, replaced by the next write). */
export function decodeEntry(value: string): SerialStatus | undefined {
  try {
    return JSON.parse(value) as SerialStatus;
  } catch {
    return undefined;
  }
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
  local ok, entry = pcall(cjson.decode, current)
  if ok and type(entry) == 'table' then
    if entry.status == 'revoked' and ARGV[3] ~= 'revoked' then return 0 end
    local version = tonumber(entry.version)
    if version and version > tonumber(ARGV[2]) then return 0 end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
return 1
`;
