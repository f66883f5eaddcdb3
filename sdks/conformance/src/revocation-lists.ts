// Revocation lists and deltas, made by the license service's revocationDocument and signed with
// the product's key pair by signJws, as the service signs them.
import { signJws } from '@licensing/license-format';
import {
  revocationDocument,
  type ListedLicense,
} from '../../../apps/license-service/src/revocation-lists/revocation-list-document';
import { ALGORITHMS, OTHER_PRODUCT_ID, PRODUCT_ID, stable, type Context } from './context';
import { algNone, hs256, nonCanonicalSignature, signRaw, withPayload } from './jose';
import type { TestKey } from './test-keys';
import { DAY, NOW, publishedJwk, VectorFileBuilder, type VectorFile } from './vector-file';

/** A day's worth of seconds: the service's default REVOCATION_LIST_NEXT_UPDATE_SECONDS. */
const NEXT_UPDATE_SECONDS = 86_400;

const at = (days: number): Date => new Date((NOW - days * DAY) * 1000);

/** The licenses of the product that are not active at version 5, sorted by serial as the service reads them. */
const AT_VERSION_5: ListedLicense[] = [
  { serial: 'LIC-PHOTO-EDITOR-A000000000000001', status: 'suspended', changedAt: at(9) },
  { serial: 'LIC-PHOTO-EDITOR-B000000000000002', status: 'revoked', changedAt: at(8) },
  { serial: 'LIC-PHOTO-EDITOR-C000000000000003', status: 'expired', changedAt: at(7) },
];
/** What changed from version 5 to 7: A reinstated, D revoked. */
const CHANGED_5_TO_7: ListedLicense[] = [
  { serial: 'LIC-PHOTO-EDITOR-A000000000000001', status: 'active', changedAt: at(2) },
  { serial: 'LIC-PHOTO-EDITOR-D000000000000004', status: 'revoked', changedAt: at(1) },
];

type Stored = {
  product_id: string;
  version: number;
  issued_at: string;
  next_update: string;
  entries: unknown[];
};

export function revocationVectors(context: Context): VectorFile {
  const { keys, pool } = context;
  const file = new VectorFileBuilder(
    'revocation-list',
    'Revocation lists (typ licensing-revocation-list+jwt) and deltas (typ licensing-revocation-delta+jwt), ' +
      'as GET /v1/products/:id/revocation-list serves them, signed with the product key pair.',
  );
  const document = (
    key: TestKey,
    version: number,
    licenses: ListedLicense[],
    since?: number,
    issuedDaysAgo = 0,
  ) => {
    const { typ, payload } = revocationDocument({
      productId: PRODUCT_ID,
      version,
      since,
      licenses,
      issuedAt: at(issuedDaysAgo),
      nextUpdateSeconds: NEXT_UPDATE_SECONDS,
    });
    return {
      token: stable(context, signJws(payload, { kid: key.kid!, privateKey: key.privateKey }, typ), key),
      payload,
    };
  };
  const asList = (payload: object): Stored => {
    const { product_id, version, issued_at, next_update, entries } = payload as Stored;
    return { product_id, version, issued_at, next_update, entries };
  };
  const add = (
    id: string,
    description: string,
    key: string,
    text: string,
    options: Record<string, unknown>,
    errors: string[],
    list?: Stored,
  ): void => {
    if ((errors.length === 0) !== (list !== undefined))
      throw new Error(`${id}: a valid vector, and only one, has a list`);
    file.add({
      id,
      description,
      key,
      input: { text },
      options,
      expected: { valid: errors.length === 0, errors, list: list ?? null },
    });
  };

  for (const algorithm of ALGORITHMS) {
    const key = keys[`product-${algorithm}`]!;
    const pem = file.pem(key);
    const { token, payload } = document(key, 5, AT_VERSION_5);
    const v = (id: string) => `${algorithm}/${id}`;
    add(
      v('valid'),
      `A list of version 5 signed with the ${algorithm} key`,
      pem,
      token,
      { product_id: PRODUCT_ID },
      [],
      asList(payload),
    );
    add(
      v('valid-jwk'),
      'The same list, verified with the key as a JWK',
      file.jwk(key),
      token,
      {},
      [],
      asList(payload),
    );
    add(
      v('wrong-key'),
      'The same list, verified with another key of the same algorithm',
      file.pem(keys[`other-${algorithm}`]!),
      token,
      {},
      ['signature_invalid'],
    );
    add(
      v('entry-dropped'),
      'The same list with a revoked license taken out after signing',
      pem,
      withPayload(token, { ...payload, entries: (payload as Stored).entries.slice(0, 1) }),
      {},
      ['signature_invalid'],
    );
    add(v('alg-none'), 'The same list with alg none and no signature', pem, algNone(token), {}, [
      'signature_invalid',
    ]);
    add(
      v('alg-hs256'),
      'The same list forged as HS256 keyed with the PEM text',
      pem,
      hs256(token, key.pem),
      {},
      ['signature_invalid'],
    );
  }

  const ed = keys['product-ed25519']!;
  const pem = file.pem(ed);
  const v5 = document(ed, 5, AT_VERSION_5);
  const held5 = asList(v5.payload);
  const v6 = document(ed, 6, [
    ...AT_VERSION_5,
    { serial: 'LIC-PHOTO-EDITOR-E000000000000005', status: 'revoked', changedAt: at(3) },
  ]);
  const held6 = asList(v6.payload);
  const v4 = document(ed, 4, AT_VERSION_5.slice(1), undefined, 10);
  const held8 = { ...held5, version: 8 };
  const delta = document(ed, 7, CHANGED_5_TO_7, 5);
  const applied = (previous: Stored): Stored => {
    const bySerial = new Map(previous.entries.map((entry) => [(entry as { serial: string }).serial, entry]));
    bySerial.delete('LIC-PHOTO-EDITOR-A000000000000001');
    bySerial.set('LIC-PHOTO-EDITOR-D000000000000004', (delta.payload as Stored).entries[0]);
    const entries = [...bySerial.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, entry]) => entry);
    return { ...asList(delta.payload), entries };
  };

  // Versions: never go back; a delta applies only to the list it starts from (or a later one).
  add('version/first-list', 'A first list, nothing held', pem, v5.token, {}, [], held5);
  add('version/newer', 'Version 6 while holding version 5', pem, v6.token, { previous: held5 }, [], held6);
  add(
    'version/same',
    'Version 5 again while holding version 5',
    pem,
    v5.token,
    { previous: held5 },
    [],
    held5,
  );
  add(
    'version/older',
    'Version 4 while holding version 5: an old list replayed',
    pem,
    v4.token,
    { previous: held5 },
    ['version_regression'],
  );
  add(
    'empty-list',
    'A product with no license revoked, suspended or expired: version 0',
    pem,
    document(ed, 0, []).token,
    {},
    [],
    asList(document(ed, 0, []).payload),
  );
  const unsorted = document(ed, 5, [...AT_VERSION_5].reverse());
  add(
    'entries-sorted',
    'Entries signed out of order: the list kept is sorted by serial',
    pem,
    unsorted.token,
    {},
    [],
    held5,
  );
  add(
    'entry-extra-member',
    'An entry with a member verifiers do not know: dropped from the list kept',
    pem,
    stable(
      context,
      signJws(
        {
          ...v5.payload,
          entries: (v5.payload as Stored).entries.map((entry) => ({ ...(entry as object), note: 'x' })),
        },
        { kid: ed.kid!, privateKey: ed.privateKey },
        'licensing-revocation-list+jwt',
      ),
      ed,
    ),
    {},
    [],
    held5,
  );

  add(
    'delta/applied',
    'A delta from 5 to 7 applied to the list of version 5',
    pem,
    delta.token,
    { previous: held5 },
    [],
    applied(held5),
  );
  add(
    'delta/applied-to-later-list',
    'The delta from 5 applied to a list of version 6: it starts before it',
    pem,
    delta.token,
    {
      previous: held6,
    },
    [],
    applied(held6),
  );
  add('delta/nothing-held', 'A delta with no list held', pem, delta.token, {}, ['version_gap']);
  add(
    'delta/gap',
    'A delta from 5 while holding version 4',
    pem,
    delta.token,
    { previous: asList(v4.payload) },
    ['version_gap'],
  );
  add('delta/regression', 'A delta to 7 while holding version 8', pem, delta.token, { previous: held8 }, [
    'version_regression',
  ]);
  const empty = document(ed, 5, [], 5);
  add('delta/empty', 'A delta from 5 to 5: nothing changed', pem, empty.token, { previous: held5 }, [], {
    ...asList(empty.payload),
    entries: held5.entries,
  });
  const restatus = document(
    ed,
    6,
    [{ serial: 'LIC-PHOTO-EDITOR-A000000000000001', status: 'revoked', changedAt: at(1) }],
    5,
  );
  add(
    'delta/status-changed',
    'A delta that moves a suspended license to revoked: the entry is replaced',
    pem,
    restatus.token,
    {
      previous: held5,
    },
    [],
    {
      ...asList(restatus.payload),
      entries: [(restatus.payload as Stored).entries[0], ...held5.entries.slice(1)],
    },
  );

  // Products.
  add(
    'product/match',
    "The expected product is the list's",
    pem,
    v5.token,
    { product_id: PRODUCT_ID },
    [],
    held5,
  );
  add(
    'product/mismatch',
    'The list is for another product than the one expected',
    pem,
    v5.token,
    { product_id: OTHER_PRODUCT_ID },
    ['product_mismatch'],
  );
  add(
    'product/previous-of-another-product',
    'The list held is of another product',
    pem,
    v5.token,
    {
      previous: { ...held5, product_id: OTHER_PRODUCT_ID, version: 1 },
    },
    ['product_mismatch'],
  );
  add(
    'product/both-mismatches',
    'Another product expected, and held: product_mismatch once',
    pem,
    v5.token,
    {
      product_id: OTHER_PRODUCT_ID,
      previous: { ...held5, product_id: OTHER_PRODUCT_ID, version: 1 },
    },
    ['product_mismatch'],
  );
  add(
    'every-error',
    'Another key, another product and an older version: every error, in order',
    file.pem(keys['other-ed25519']!),
    v4.token,
    {
      product_id: OTHER_PRODUCT_ID,
      previous: held5,
    },
    ['signature_invalid', 'product_mismatch', 'version_regression'],
  );

  // Keys.
  add(
    'keys/unknown-kid',
    "A JWK Set without the list's kid",
    file.key('other-ed25519.jwks', {
      jwks: { keys: [publishedJwk(keys['other-ed25519']!)] },
    }),
    v5.token,
    {},
    ['unknown_key'],
  );
  add(
    'keys/jwks',
    "A JWK Set with the list's kid",
    file.key('products.jwks', {
      jwks: { keys: ALGORITHMS.map((algorithm) => publishedJwk(keys[`product-${algorithm}`]!)) },
    }),
    v5.token,
    {},
    [],
    held5,
  );

  // Documents that are not lists.
  const raw = (typ: string, payload: unknown): string =>
    signRaw(pool, { alg: 'EdDSA', typ, kid: ed.kid }, JSON.stringify(payload), ed);
  const LIST = 'licensing-revocation-list+jwt';
  const DELTA = 'licensing-revocation-delta+jwt';
  const malformed = (id: string, description: string, text: string) =>
    add(`malformed/${id}`, description, pem, text, {}, ['malformed']);
  malformed('delta-typ-on-list', "A full list's payload typed as a delta", raw(DELTA, v5.payload));
  malformed('list-typ-on-delta', "A delta's payload typed as a full list", raw(LIST, delta.payload));
  malformed(
    'since-after-version',
    'A delta whose since is after its version',
    raw(DELTA, { ...delta.payload, since: 8 }),
  );
  malformed('since-null-in-list', 'A full list with since: null', raw(LIST, { ...v5.payload, since: null }));
  malformed(
    'status-active',
    'A full list naming an active license',
    raw(LIST, {
      ...v5.payload,
      entries: [{ serial: 'LIC-X', status: 'active', at: at(1).toISOString() }],
    }),
  );
  malformed(
    'at-not-a-date',
    'An entry whose at is not a date',
    raw(LIST, {
      ...v5.payload,
      entries: [{ serial: 'LIC-X', status: 'revoked', at: 'yesterday' }],
    }),
  );
  malformed('version-negative', 'Version -1', raw(LIST, { ...v5.payload, version: -1 }));
  malformed('version-fraction', 'Version 5.5', raw(LIST, { ...v5.payload, version: 5.5 }));
  malformed('version-string', 'Version "5"', raw(LIST, { ...v5.payload, version: '5' }));
  malformed('next-update-missing', 'No next_update', raw(LIST, { ...v5.payload, next_update: undefined }));
  malformed(
    'removed-not-array',
    'A delta whose removed is an object',
    raw(DELTA, { ...delta.payload, removed: {} }),
  );
  malformed(
    'removed-serial-number',
    'A delta removing a serial that is a number',
    raw(DELTA, { ...delta.payload, removed: [{ serial: 5 }] }),
  );
  malformed('entries-missing', 'A list without entries', raw(LIST, { ...v5.payload, entries: undefined }));
  malformed(
    'typ-missing',
    'A list without typ',
    signRaw(pool, { alg: 'EdDSA', kid: ed.kid }, JSON.stringify(v5.payload), ed),
  );
  malformed(
    'license-file',
    'A license file given as a list',
    signRaw(pool, { alg: 'EdDSA', typ: 'license+jwt', kid: ed.kid }, JSON.stringify(v5.payload), ed),
  );
  malformed('truncated', 'The list cut in its payload', v5.token.slice(0, v5.token.indexOf('.') + 30));
  malformed(
    'non-canonical-signature',
    "The signature's last character leaves padding bits set",
    nonCanonicalSignature(v5.token),
  );
  add('whitespace', 'The list with a final newline: trimmed', pem, `${v5.token}\n`, {}, [], held5);
  return file.build();
}
