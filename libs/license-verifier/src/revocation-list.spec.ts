import { generateKeyPairSync, sign } from 'node:crypto';
import {
  isRevoked,
  isStale,
  revocationEntry,
  verifyRevocationList,
  type RevocationList,
} from './revocation-list';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function signed(typ: string, payload: Record<string, unknown>): string {
  const input = `${b64({ alg: 'EdDSA', typ, kid: 'kp-1' })}.${b64(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`;
}
const times = { issued_at: '2030-01-01T00:00:00.000Z', next_update: '2030-01-02T00:00:00.000Z' };
const entry = (serial: string, status = 'revoked') => ({ serial, status, at: '2029-12-31T00:00:00.000Z' });
const list = (version: number, entries: unknown[]) =>
  signed('licensing-revocation-list+jwt', { product_id: 'p-1', version, ...times, entries });
const delta = (since: number, version: number, entries: unknown[], removed: string[]) =>
  signed('licensing-revocation-delta+jwt', {
    product_id: 'p-1',
    since,
    version,
    ...times,
    entries,
    removed: removed.map((serial) => ({ serial, at: '2029-12-31T00:00:00.000Z' })),
  });
const codes = async (jws: string, previous?: RevocationList) =>
  (await verifyRevocationList(jws, pem, { productId: 'p-1', previous })).errors.map((e) => e.code);

describe('verifyRevocationList', () => {
  let held: RevocationList;

  beforeAll(async () => {
    held = (await verifyRevocationList(list(3, [entry('LIC-B'), entry('LIC-A', 'suspended')]), pem)).list!;
  });

  it('verifies a full list, sorted by serial, and answers who may not run', () => {
    expect(held.version).toBe(3);
    expect(held.entries.map((e) => e.serial)).toEqual(['LIC-A', 'LIC-B']);
    expect(isRevoked(held, 'LIC-A')).toBe(true);
    expect(isRevoked(held, { serial: 'LIC-C' })).toBe(false);
    expect(revocationEntry(held, 'LIC-A')?.status).toBe('suspended');
    expect(isStale(held, Date.parse('2030-01-01T12:00:00Z'))).toBe(false);
    expect(isStale(held, Date.parse('2030-01-03T00:00:00Z'))).toBe(true);
  });

  it('applies a delta: entries replace or add, removed serials go', async () => {
    const result = await verifyRevocationList(delta(3, 5, [entry('LIC-C', 'expired')], ['LIC-A']), pem, {
      previous: held,
    });
    expect(result.errors).toEqual([]);
    expect(result.list).toMatchObject({ version: 5, entries: [entry('LIC-B'), entry('LIC-C', 'expired')] });
    // A delta from an older version than held also applies (it repeats changes held already).
    expect((await verifyRevocationList(delta(1, 5, [], ['LIC-A']), pem, { previous: held })).valid).toBe(
      true,
    );
  });

  it('refuses going back, gaps, deltas with nothing held, and foreign products', async () => {
    expect(await codes(list(2, []), held)).toEqual(['version_regression']);
    expect(await codes(delta(4, 6, [], []), held)).toEqual(['version_gap']);
    expect(await codes(delta(0, 6, [], []))).toEqual(['version_gap']);
    expect(await codes(list(4, []), { ...held, product_id: 'p-2' })).toEqual(['product_mismatch']);
    expect(await codes(list(4, []), held)).toEqual([]);
  });

  it('refuses what is not a list: another typ, a delta dressed as a list, bad entries, another key', async () => {
    const payload = { product_id: 'p-1', version: 4, ...times, entries: [] };
    expect(await codes(signed('license+jwt', payload))).toEqual(['malformed']);
    expect(
      await codes(signed('licensing-revocation-list+jwt', { ...payload, since: 1, removed: [] })),
    ).toEqual(['malformed']);
    expect(await codes(list(4, [entry('LIC-A', 'active')]))).toEqual(['malformed']);
    expect(await codes(list(-1, []))).toEqual(['malformed']);
    const other = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect((await verifyRevocationList(list(4, []), other)).errors.map((e) => e.code)).toEqual([
      'signature_invalid',
    ]);
  });
});
