// License files: every algorithm the platform signs with, every way a verifier is given a file and
// a key, and every reason the JavaScript SDK refuses one.
import { buildClaims, signJws, type BuildClaimsInput } from '@licensing/license-format';
import {
  ALGORITHMS,
  blobFromJws,
  date,
  FINGERPRINT,
  LICENSE_ID,
  licenseSummary,
  ORG_ID,
  OTHER_FINGERPRINT,
  OTHER_PRODUCT_ID,
  PRODUCT_CODE,
  PRODUCT_ID,
  SERIAL,
  stable,
  type Context,
} from './context';
import {
  algNone,
  b64url,
  hs256,
  jsonSegment,
  nonCanonicalSignature,
  parts,
  signatureOf,
  signRaw,
  withHeader,
  withPayload,
  type SignatureKind,
} from './jose';
import type { SigningAlgorithm, TestKey } from './test-keys';
import { DAY, NOW, publishedJwk, VectorFileBuilder, type VectorFile } from './vector-file';

export const LICENSE_INPUT: BuildClaimsInput = {
  licenseId: LICENSE_ID,
  serial: SERIAL,
  orgId: ORG_ID,
  productId: PRODUCT_ID,
  productCode: PRODUCT_CODE,
  licenseType: 'subscription',
  customerId: 'cus_42',
  customerEmail: 'ada@example.com',
  features: ['export', 'pro'],
  maxSeats: 3,
  hardwareBinding: null,
  validFrom: date(NOW - DAY),
  validUntil: date(NOW + 30 * DAY),
  issuedAt: date(NOW - DAY),
};

const NBF = NOW - DAY;
const EXP = NOW + 30 * DAY;

interface Case {
  id: string;
  description: string;
  key: string;
  /** The license as the verifier is given it: text, or bytes in base64. */
  input: { text: string } | { bytes_base64: string };
  /** The JWS the expected summary is read from; the input's text unless said. */
  token?: string;
  options?: Record<string, unknown>;
  errors: string[];
}

export function licenseVectors(context: Context): VectorFile {
  const { keys, pool } = context;
  const file = new VectorFileBuilder(
    'license',
    'License files (typ license+jwt) signed with the product key pair, as `GET /v1/licenses/:id/download` serves them.',
  );
  const add = (c: Case): void => {
    const token = c.token ?? ('text' in c.input ? c.input.text : '');
    file.add({
      id: c.id,
      description: c.description,
      key: c.key,
      input: c.input,
      options: { now: NOW, ...c.options },
      expected: {
        valid: c.errors.length === 0,
        errors: c.errors,
        license: c.errors.includes('malformed') ? null : licenseSummary(token, c.errors),
      },
    });
  };
  const product = (algorithm: SigningAlgorithm): TestKey => keys[`product-${algorithm}`]!;
  const other = (algorithm: SigningAlgorithm): TestKey => keys[`other-${algorithm}`]!;
  const sign = (key: TestKey, input: Partial<BuildClaimsInput> = {}): string =>
    stable(
      context,
      signJws(buildClaims({ ...LICENSE_INPUT, ...input }), { kid: key.kid!, privateKey: key.privateKey }),
      key,
    );
  const signPayload = (key: TestKey, payload: object): string =>
    stable(context, signJws(payload, { kid: key.kid!, privateKey: key.privateKey }), key);
  const raw = (key: TestKey, header: object, payloadText: string, kind?: SignatureKind): string =>
    signRaw(pool, header, payloadText, key, kind);
  const header = (key: TestKey, alg: string): Record<string, unknown> => ({
    alg,
    typ: 'license+jwt',
    kid: key.kid,
  });

  const productJwks = file.key('products.jwks', {
    jwks: { keys: ALGORITHMS.map((algorithm) => publishedJwk(product(algorithm))) },
  });

  // The same checks for each algorithm.
  const JOSE: Record<SigningAlgorithm, string> = {
    ed25519: 'EdDSA',
    'ecdsa-p256': 'ES256',
    'rsa-3072': 'PS256',
  };
  for (const algorithm of ALGORITHMS) {
    const key = product(algorithm);
    const pem = file.pem(key);
    const token = sign(key);
    const text = { text: token };
    const at = (id: string) => `${algorithm}/${id}`;
    const signedBy = `a license signed with the product's ${algorithm} key (${JOSE[algorithm]})`;
    add({
      id: at('valid-pem'),
      description: `${signedBy}, verified with its PEM`,
      key: pem,
      input: text,
      errors: [],
    });
    add({
      id: at('valid-jwk'),
      description: `${signedBy}, verified with its JWK (kid, alg, use)`,
      key: file.jwk(key),
      input: text,
      errors: [],
    });
    add({
      id: at('valid-jwks'),
      description: `${signedBy}, verified with a JWK Set of three keys: the header's kid picks one`,
      key: productJwks,
      input: text,
      errors: [],
    });
    add({
      id: at('valid-blob'),
      description: `${signedBy}, given as the API's license_blob (standard base64 of the file)`,
      key: pem,
      input: { text: blobFromJws(token) },
      token,
      errors: [],
    });
    add({
      id: at('valid-bytes'),
      description: `${signedBy}, given as the file's bytes with a final CRLF`,
      key: pem,
      input: { bytes_base64: Buffer.from(`${token}\r\n`).toString('base64') },
      token,
      errors: [],
    });
    add({
      id: at('wrong-key'),
      description: `${signedBy}, verified with another ${algorithm} key`,
      key: file.pem(other(algorithm)),
      input: text,
      errors: ['signature_invalid'],
    });
    const otherAlgorithm = ALGORITHMS[(ALGORITHMS.indexOf(algorithm) + 1) % ALGORITHMS.length]!;
    add({
      id: at('key-of-another-algorithm'),
      description: `${signedBy}, verified with a ${otherAlgorithm} key: the key decides the algorithm`,
      key: file.pem(product(otherAlgorithm)),
      input: text,
      errors: ['signature_invalid'],
    });
    const tampered = withPayload(token, {
      ...parts(token).payload,
      features: ['export', 'pro', 'enterprise'],
    });
    add({
      id: at('tampered-payload'),
      description: `${signedBy}, with a feature added to the payload after signing`,
      key: pem,
      input: { text: tampered },
      errors: ['signature_invalid'],
    });
    add({
      id: at('tampered-header'),
      description: `${signedBy}, with a member added to the header after signing`,
      key: pem,
      input: { text: withHeader(token, { ...parts(token).header, x5u: 'https://attacker.example/key' }) },
      errors: ['signature_invalid'],
    });
    add({
      id: at('alg-none'),
      description: `${signedBy}, its header changed to alg none and its signature dropped`,
      key: pem,
      input: { text: algNone(token) },
      errors: ['signature_invalid'],
    });
    add({
      id: at('alg-hs256'),
      description: `${signedBy}, forged as HS256 keyed with the public key's PEM text`,
      key: pem,
      input: { text: hs256(token, key.pem) },
      errors: ['signature_invalid'],
    });
    add({
      id: at('unknown-kid'),
      description: `${signedBy}, verified with a JWK Set that holds no key with its kid`,
      key: file.key(`${other(algorithm).name}.jwks`, { jwks: { keys: [publishedJwk(other(algorithm))] } }),
      input: text,
      errors: ['unknown_key'],
    });
    add({
      id: at('expired'),
      description: `${signedBy}, evaluated a day after its valid_until`,
      key: pem,
      input: text,
      options: { now: EXP + DAY },
      errors: ['expired'],
    });
    add({
      id: at('signature-cut-short'),
      description: `${signedBy}, with the last 3 bytes of its signature cut off`,
      key: pem,
      input: {
        text: withSignature(
          token,
          Buffer.from(token.slice(token.lastIndexOf('.') + 1), 'base64url').subarray(0, -3),
        ),
      },
      token,
      errors: ['signature_invalid'],
    });
    add({
      id: at('signature-empty'),
      description: `${signedBy}, with an empty signature segment`,
      key: pem,
      input: { text: token.slice(0, token.lastIndexOf('.') + 1) },
      token,
      errors: ['signature_invalid'],
    });
  }

  // Algorithm-specific signatures.
  const ed = product('ed25519');
  const edPem = file.pem(ed);
  const edToken = sign(ed);
  add({
    id: 'ed25519/alg-Ed25519',
    description: 'Ed25519, its header naming the algorithm "Ed25519" (RFC 9864) instead of "EdDSA": accepted',
    key: edPem,
    input: { text: raw(ed, header(ed, 'Ed25519'), JSON.stringify(parts(edToken).payload)) },
    errors: [],
  });
  add({
    id: 'ed25519/signature-s-plus-l',
    description:
      'Ed25519 with the group order L added to S: the same point equation, a non-canonical S, refused',
    key: edPem,
    input: { text: edSignaturePlusL(edToken) },
    token: edToken,
    errors: ['signature_invalid'],
  });

  const es = product('ecdsa-p256');
  const esPem = file.pem(es);
  const esToken = sign(es);
  add({
    id: 'ecdsa-p256/signature-der',
    description: 'ES256 with a valid signature in DER form instead of the 64-byte R||S form: refused',
    key: esPem,
    input: { text: `${esToken.slice(0, esToken.lastIndexOf('.'))}.${b64url(derOf(esToken))}` },
    token: esToken,
    errors: ['signature_invalid'],
  });
  add({
    id: 'ecdsa-p256/signature-high-s',
    description: 'ES256 with S replaced by n - S: the other valid signature of the same bytes, accepted',
    key: esPem,
    input: { text: ecdsaHighS(esToken) },
    token: esToken,
    errors: [],
  });
  add({
    id: 'ecdsa-p256/signature-r-zero',
    description: 'ES256 with R set to zero: refused',
    key: esPem,
    input: { text: ecdsaZeroR(esToken) },
    token: esToken,
    errors: ['signature_invalid'],
  });

  const rsa = product('rsa-3072');
  const rsaPem = file.pem(rsa);
  const rsaPayload = JSON.stringify(parts(sign(rsa)).payload);
  const rsaVariants: [SignatureKind, string][] = [
    ['rsa-pss-salt-0', 'RSASSA-PSS with an empty salt, where PS256 needs 32 bytes'],
    ['rsa-pss-salt-64', 'RSASSA-PSS with a 64-byte salt, where PS256 needs 32 bytes'],
    ['rsa-pkcs1-v1_5', 'RSASSA-PKCS1-v1_5 (RS256) under a PS256 header'],
    ['rsa-pss-sha1-mgf', 'RSASSA-PSS over SHA-1 with MGF1-SHA-1'],
  ];
  for (const [kind, what] of rsaVariants) {
    add({
      id: `rsa-3072/${kind}`,
      description: `A license signed with ${what}: refused`,
      key: rsaPem,
      input: { text: raw(rsa, header(rsa, 'PS256'), rsaPayload, kind) },
      errors: ['signature_invalid'],
    });
  }
  const rsa2048 = keys['product-rsa-2048']!;
  add({
    id: 'rsa-2048/valid',
    description: 'A license signed with an imported 2048-bit RSA key (PS256): the smallest size accepted',
    key: file.pem(rsa2048),
    input: { text: sign(rsa2048) },
    errors: [],
  });

  // Time: nbf is valid_from, exp is valid_until; both ends are exact seconds.
  const time = (id: string, description: string, now: number, errors: string[], tolerance?: number): void =>
    add({
      id: `time/${id}`,
      description,
      key: edPem,
      input: { text: edToken },
      options: { now, ...(tolerance === undefined ? {} : { clock_tolerance_seconds: tolerance }) },
      errors,
    });
  time('before-nbf', 'One second before valid_from (nbf)', NBF - 1, ['not_yet_valid']);
  time('at-nbf', 'At the valid_from second: valid from it', NBF, []);
  time('before-exp', 'One second before valid_until (exp)', EXP - 1, []);
  time('at-exp', 'At the valid_until second: expired from it', EXP, ['expired']);
  time('expired-within-tolerance', '30 s past exp with a 60 s clock tolerance', EXP + 30, [], 60);
  time('expired-beyond-tolerance', '61 s past exp with a 60 s clock tolerance', EXP + 61, ['expired'], 60);
  time('early-within-tolerance', '30 s before nbf with a 60 s clock tolerance', NBF - 30, [], 60);
  time(
    'early-beyond-tolerance',
    '61 s before nbf with a 60 s clock tolerance',
    NBF - 61,
    ['not_yet_valid'],
    60,
  );
  add({
    id: 'time/perpetual',
    description: 'A perpetual license (no exp, valid_until null), a century later',
    key: edPem,
    input: { text: sign(ed, { licenseType: 'perpetual', validUntil: null }) },
    options: { now: NOW + 36_525 * DAY },
    errors: [],
  });
  const moonLanding = new Date('1969-07-20T20:17:40Z');
  add({
    id: 'time/perpetual-since-1969',
    description: 'A perpetual license valid since 1969: valid at any time since (SDK examples run it)',
    key: edPem,
    input: {
      text: sign(ed, {
        licenseType: 'perpetual',
        validFrom: moonLanding,
        issuedAt: moonLanding,
        validUntil: null,
      }),
    },
    errors: [],
  });
  add({
    id: 'time/year-10000',
    description: 'valid_until in the year 10000: shown with an extended year, +010000',
    key: edPem,
    input: { text: sign(ed, { validUntil: new Date('+010000-01-01T00:00:00Z') }) },
    errors: [],
  });
  add({
    id: 'time/before-1970',
    description: 'valid_from in 1969: negative Unix seconds',
    key: edPem,
    input: {
      text: sign(ed, {
        validFrom: new Date('1969-07-20T20:17:40Z'),
        issuedAt: new Date('1969-07-20T20:17:40Z'),
      }),
    },
    errors: [],
  });
  add({
    id: 'time/iat-last-date',
    description: 'iat at 8.64e12 s, the last second a JavaScript Date holds: valid',
    key: edPem,
    input: { text: sign(ed, { issuedAt: new Date(8.64e15) }) },
    errors: [],
  });
  add({
    id: 'time/iat-beyond-dates',
    description: 'iat one second past what a JavaScript Date holds: malformed',
    key: edPem,
    input: { text: signPayload(ed, { ...parts(edToken).payload, iat: 8.64e12 + 1 }) },
    errors: ['malformed'],
  });
  add({
    id: 'time/exp-before-dates',
    description: 'exp one second before what a JavaScript Date holds: malformed',
    key: edPem,
    input: { text: signPayload(ed, { ...parts(edToken).payload, exp: -8.64e12 - 1 }) },
    errors: ['malformed'],
  });

  // Product and machine.
  const productCase = (id: string, description: string, productId: string, errors: string[]) =>
    add({
      id: `context/${id}`,
      description,
      key: edPem,
      input: { text: edToken },
      options: { product_id: productId },
      errors,
    });
  productCase('product-match', "The expected product is the license's", PRODUCT_ID, []);
  productCase(
    'product-mismatch',
    'The license is for another product than the one expected',
    OTHER_PRODUCT_ID,
    ['product_mismatch'],
  );
  const bound = sign(ed, { licenseType: 'node_locked', hardwareBinding: { fingerprint: FINGERPRINT } });
  const machine = (id: string, description: string, options: Record<string, unknown>, errors: string[]) =>
    add({ id: `context/${id}`, description, key: edPem, input: { text: bound }, options, errors });
  machine('fingerprint-match', 'A node-locked license on its own machine', { fingerprint: FINGERPRINT }, []);
  machine(
    'fingerprint-mismatch',
    'A node-locked license on another machine',
    { fingerprint: OTHER_FINGERPRINT },
    ['fingerprint_mismatch'],
  );
  machine('fingerprint-not-given', 'A node-locked license, no fingerprint given: not checked', {}, []);
  add({
    id: 'context/fingerprint-of-unbound-license',
    description: 'A fingerprint given for a license bound to no machine: nothing to check',
    key: edPem,
    input: { text: edToken },
    options: { fingerprint: OTHER_FINGERPRINT },
    errors: [],
  });
  add({
    id: 'context/every-error',
    description: 'Another key, another product, expired and another machine: every error, in order',
    key: file.pem(other('ed25519')),
    input: { text: bound },
    options: { now: EXP, product_id: OTHER_PRODUCT_ID, fingerprint: OTHER_FINGERPRINT },
    errors: ['signature_invalid', 'product_mismatch', 'expired', 'fingerprint_mismatch'],
  });
  add({
    id: 'context/unknown-kid-and-not-yet-valid',
    description: 'No key for the kid, and too early: both errors',
    key: file.key('other-ed25519.jwks', { jwks: { keys: [publishedJwk(other('ed25519'))] } }),
    input: { text: edToken },
    options: { now: NBF - 1 },
    errors: ['unknown_key', 'not_yet_valid'],
  });
  add({
    id: 'context/entitlements',
    description: 'A license with entitlements: the summary lists them, sorted as signed',
    key: edPem,
    input: { text: sign(ed, { entitlements: ['cloud-sync', 'plugins'] }) },
    errors: [],
  });

  // Keys: the kid picks a key of a JWK Set; keys without a kid are all tried.
  const previous = keys['product-ed25519-previous']!;
  const rotation = file.key('rotation.jwks', { jwks: { keys: [publishedJwk(ed), publishedJwk(previous)] } });
  add({
    id: 'keys/rotation-previous-key',
    description: 'A license signed before a key rotation, with a JWK Set of the new and the previous key',
    key: rotation,
    input: { text: sign(previous) },
    errors: [],
  });
  add({
    id: 'keys/kid-ignored-with-pem',
    description: "A PEM has no kid: the header's kid, unknown, is not looked up",
    key: edPem,
    input: {
      text: raw(
        ed,
        header({ ...ed, kid: 'not-a-known-kid' }, 'EdDSA'),
        JSON.stringify(parts(edToken).payload),
      ),
    },
    errors: [],
  });
  add({
    id: 'keys/no-kid-in-header-with-pem',
    description: 'A header without kid, verified with the PEM',
    key: edPem,
    input: { text: raw(ed, { alg: 'EdDSA', typ: 'license+jwt' }, JSON.stringify(parts(edToken).payload)) },
    errors: [],
  });
  add({
    id: 'keys/no-kid-in-header-with-jwks',
    description: 'A header without kid, and a JWK Set whose keys all have one: no key to try',
    key: productJwks,
    input: { text: raw(ed, { alg: 'EdDSA', typ: 'license+jwt' }, JSON.stringify(parts(edToken).payload)) },
    errors: ['unknown_key'],
  });
  const edJwkWithoutKid = Object.fromEntries(
    Object.entries(publishedJwk(ed)).filter(([name]) => name !== 'kid'),
  );
  add({
    id: 'keys/jwk-without-kid-is-tried',
    description: 'A JWK Set with the product key without kid: tried for a kid the set does not name',
    key: file.key('kidless.jwks', { jwks: { keys: [edJwkWithoutKid, publishedJwk(other('ecdsa-p256'))] } }),
    input: { text: edToken },
    errors: [],
  });
  add({
    id: 'keys/kid-names-the-wrong-key',
    description: 'The kid names another key of the set; the right key, without kid, is then not tried',
    key: file.key('kid-on-wrong-key.jwks', {
      jwks: { keys: [{ ...publishedJwk(other('ed25519')), kid: ed.kid }, edJwkWithoutKid] },
    }),
    input: { text: edToken },
    errors: ['signature_invalid'],
  });

  // Header and payload members.
  const payloadText = JSON.stringify(parts(edToken).payload);
  const headered = (id: string, description: string, h: Record<string, unknown>, errors: string[]) =>
    add({ id: `header/${id}`, description, key: edPem, input: { text: raw(ed, h, payloadText) }, errors });
  headered(
    'crit',
    'A signed header with a crit member: no extension is understood, so refused',
    {
      ...header(ed, 'EdDSA'),
      crit: ['exp'],
    },
    ['signature_invalid'],
  );
  headered(
    'extra-member',
    'A signed header with a member verifiers do not know: ignored',
    {
      ...header(ed, 'EdDSA'),
      'x-note': 'hello',
    },
    [],
  );
  headered('typ-missing', 'A header without typ: not a license file', { alg: 'EdDSA', kid: ed.kid }, [
    'malformed',
  ]);
  headered('typ-jwt', 'A header with typ JWT: not a license file', { ...header(ed, 'EdDSA'), typ: 'JWT' }, [
    'malformed',
  ]);
  headered(
    'typ-revocation-list',
    'A JWS typed as a revocation list: not a license file',
    {
      ...header(ed, 'EdDSA'),
      typ: 'licensing-revocation-list+jwt',
    },
    ['malformed'],
  );
  headered(
    'typ-case',
    'typ in capitals (LICENSE+JWT): compared exactly, so not a license file',
    {
      ...header(ed, 'EdDSA'),
      typ: 'LICENSE+JWT',
    },
    ['malformed'],
  );
  headered('alg-missing', 'A header without alg', { typ: 'license+jwt', kid: ed.kid }, ['malformed']);
  headered('alg-number', 'A header whose alg is a number', { ...header(ed, 'EdDSA'), alg: 1 }, ['malformed']);

  const payloaded = (id: string, description: string, text: string, errors: string[]) =>
    add({
      id: `payload/${id}`,
      description,
      key: edPem,
      input: { text: raw(ed, header(ed, 'EdDSA'), text) },
      errors,
    });
  const edClaims = parts(edToken).payload;
  const without = (name: string) =>
    JSON.stringify(Object.fromEntries(Object.entries(edClaims).filter(([k]) => k !== name)));
  const changed = (values: Record<string, unknown>) => JSON.stringify({ ...edClaims, ...values });
  payloaded('unknown-claim', 'A claim verifiers do not know: kept, ignored', changed({ seat_note: 'x' }), []);
  payloaded('missing-sub', 'No sub (serial): not license claims', without('sub'), ['malformed']);
  payloaded(
    'missing-hardware-binding',
    'No hardware_binding (null is required)',
    without('hardware_binding'),
    ['malformed'],
  );
  payloaded('version-2', 'v 2: a format this verifier does not know', changed({ v: 2 }), ['malformed']);
  payloaded(
    'unknown-license-type',
    'license_type "lifetime": not a type the platform issues',
    changed({ license_type: 'lifetime' }),
    ['malformed'],
  );
  payloaded('iat-string', 'iat as a string', changed({ iat: String(NOW - DAY) }), ['malformed']);
  payloaded('iat-fraction', 'iat with a fraction (1.5 s)', changed({ iat: NOW - DAY + 0.5 }), ['malformed']);
  payloaded('features-not-strings', 'features holding a number', changed({ features: ['pro', 7] }), [
    'malformed',
  ]);
  payloaded(
    'max-seats-unsafe',
    'max_seats of 2^53: beyond exact JSON integers',
    changed({ max_seats: 2 ** 53 }),
    ['malformed'],
  );
  payloaded(
    'max-seats-largest-safe',
    'max_seats of 2^53 - 1: the largest exact JSON integer',
    changed({ max_seats: 2 ** 53 - 1 }),
    [],
  );
  payloaded(
    'integer-written-with-fraction',
    'iat written 1803816000.0 and max_seats 3e0: JSON numbers with integer values are integers',
    changed({ iat: 0, max_seats: 0 })
      .replace('"iat":0', `"iat":${NOW - DAY}.0`)
      .replace('"max_seats":0', '"max_seats":3e0'),
    [],
  );
  payloaded(
    'number-overflow',
    'max_seats written 1e400: beyond double precision',
    changed({ max_seats: 0 }).replace('"max_seats":0', '"max_seats":1e400'),
    ['malformed'],
  );
  payloaded(
    'duplicate-member',
    'product_id twice, another product first: the last one counts',
    `{"product_id":"${OTHER_PRODUCT_ID}",${payloadText.slice(1)}`,
    [],
  );
  payloaded('array', 'A JSON array as the payload', '[1,2,3]', ['malformed']);
  payloaded('not-json', 'A payload that is not JSON', 'not json', ['malformed']);
  payloaded(
    'nan',
    'A payload with NaN, which JSON does not have',
    changed({ max_seats: 0 }).replace('"max_seats":0', '"max_seats":NaN'),
    ['malformed'],
  );
  payloaded('byte-order-mark', 'A payload starting with a UTF-8 byte order mark', `\uFEFF${payloadText}`, [
    'malformed',
  ]);
  add({
    id: 'payload/invalid-utf8',
    description: 'A payload whose bytes are not UTF-8',
    key: edPem,
    input: {
      text: (() => {
        const signingInput = `${jsonSegment(header(ed, 'EdDSA'))}.${b64url(Buffer.concat([Buffer.from(payloadText.slice(0, -1)), Buffer.from([0xff, 0x7d])]))}`;
        return `${signingInput}.${signatureOf(pool, signingInput, ed)}`;
      })(),
    },
    errors: ['malformed'],
  });

  // Encodings: one file, one text.
  const encoded = (id: string, description: string, input: Case['input'], errors: string[]) =>
    add({ id: `encoding/${id}`, description, key: edPem, input, token: edToken, errors });
  encoded('trailing-newline', "The file's text with a final newline", { text: `${edToken}\n` }, []);
  encoded(
    'surrounding-whitespace',
    'Spaces, tabs and line breaks around the token',
    { text: ` \t\r\n${edToken} \n\t` },
    [],
  );
  encoded(
    'byte-order-mark',
    "The file's text behind a UTF-8 byte order mark (removed as whitespace)",
    { text: `\uFEFF${edToken}` },
    [],
  );
  encoded(
    'no-break-space',
    'A no-break space (U+00A0) after the token: whitespace, removed',
    { text: `${edToken}\u00A0` },
    [],
  );
  encoded(
    'unit-separator',
    'U+001F after the token: not whitespace, so part of the signature',
    { text: `${edToken}\u001F` },
    ['malformed'],
  );
  encoded('inner-space', 'A space inside the token', { text: edToken.replace('.', '. ') }, ['malformed']);
  encoded(
    'bytes-not-utf8',
    'Bytes that are not UTF-8 after the token',
    {
      bytes_base64: Buffer.concat([Buffer.from(edToken), Buffer.from([0xc3, 0x28])]).toString('base64'),
    },
    ['malformed'],
  );
  encoded(
    'two-segments',
    'The signature segment and its dot removed',
    { text: edToken.slice(0, edToken.lastIndexOf('.')) },
    ['malformed'],
  );
  encoded('four-segments', 'A fourth segment', { text: `${edToken}.AAAA` }, ['malformed']);
  encoded('empty', 'An empty text', { text: '' }, ['malformed']);
  encoded('dots-only', 'Two dots', { text: '..' }, ['malformed']);
  encoded(
    'truncated-payload',
    'The token cut in the middle of its payload',
    { text: edToken.slice(0, edToken.indexOf('.') + 20) },
    ['malformed'],
  );
  encoded(
    'non-canonical-signature',
    "The signature's last character leaves padding bits set",
    { text: nonCanonicalSignature(edToken) },
    ['malformed'],
  );
  encoded('signature-padded', 'The signature segment with = padding', { text: `${edToken}==` }, [
    'malformed',
  ]);
  encoded(
    'standard-alphabet',
    'A character of the standard base64 alphabet (+) in the signature',
    {
      text: `${edToken.slice(0, -2)}+${edToken.slice(-1)}`,
    },
    ['malformed'],
  );
  encoded(
    'payload-length-1-mod-4',
    'A payload segment of 4n + 1 characters',
    {
      text: (() => {
        const [h, p, s] = edToken.split('.') as [string, string, string];
        return `${h}.${p}${'A'.repeat((5 - (p.length % 4)) % 4)}.${s}`;
      })(),
    },
    ['malformed'],
  );
  encoded(
    'blob-line-wrapped',
    'The license_blob wrapped at 76 columns',
    {
      text: blobFromJws(edToken).replace(/.{76}/g, '$&\n'),
    },
    [],
  );
  // Genuine files of different lengths, for blobs that need padding or a + or / to show a fault.
  const genuine = (test: (token: string) => boolean): string => {
    for (let n = 1; n < 100; n++) {
      const token = sign(ed, { customerId: `cus_${'4'.repeat(n)}` });
      if (test(token)) return token;
    }
    throw new Error('no such token');
  };
  const padded = genuine((token) => token.length % 3 !== 0);
  const blobbed = (id: string, description: string, token: string, text: string, errors: string[]) =>
    add({ id: `encoding/${id}`, description, key: edPem, input: { text }, token, errors });
  blobbed('blob-padded', 'A license_blob that ends with = padding', padded, blobFromJws(padded), []);
  blobbed(
    'blob-unpadded',
    'The same license_blob without its = padding',
    padded,
    blobFromJws(padded).replace(/=+$/, ''),
    ['malformed'],
  );
  encoded(
    'blob-of-file-with-newline',
    "A license_blob of the file's text with a final newline: the newline stays",
    {
      text: blobFromJws(`${edToken}\n`),
    },
    ['malformed'],
  );
  blobbed(
    'blob-non-canonical',
    'A license_blob whose last character leaves padding bits set',
    padded,
    (() => {
      const blob = blobFromJws(padded);
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
      const cut = blob.indexOf('=');
      const last = alphabet.indexOf(blob[cut - 1]!);
      return `${blob.slice(0, cut - 1)}${alphabet[last + 1]}${blob.slice(cut)}`;
    })(),
    ['malformed'],
  );

  return file.build();
}

/** The token with another signature. */
function withSignature(token: string, signature: Buffer): string {
  return `${token.slice(0, token.lastIndexOf('.'))}.${b64url(signature)}`;
}

/** An Ed25519 token whose S has the group order L added: S + L < 2^256, so it still fits. */
function edSignaturePlusL(token: string): string {
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  const cut = token.lastIndexOf('.');
  const signature = Buffer.from(token.slice(cut + 1), 'base64url');
  const s = BigInt(`0x${Buffer.from(signature.subarray(32)).reverse().toString('hex')}`) + L;
  const bytes = Buffer.from(s.toString(16).padStart(64, '0'), 'hex').reverse();
  return `${token.slice(0, cut)}.${b64url(Buffer.concat([signature.subarray(0, 32), bytes]))}`;
}

const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

function rs(token: string): [bigint, bigint, string] {
  const cut = token.lastIndexOf('.');
  const signature = Buffer.from(token.slice(cut + 1), 'base64url');
  const int = (bytes: Buffer) => BigInt(`0x${bytes.toString('hex')}`);
  return [int(signature.subarray(0, 32)), int(signature.subarray(32)), token.slice(0, cut)];
}

const bytes32 = (value: bigint): Buffer => Buffer.from(value.toString(16).padStart(64, '0'), 'hex');

function ecdsaHighS(token: string): string {
  const [r, s, signingInput] = rs(token);
  return `${signingInput}.${b64url(Buffer.concat([bytes32(r), bytes32(P256_N - s)]))}`;
}

function ecdsaZeroR(token: string): string {
  const [, s, signingInput] = rs(token);
  return `${signingInput}.${b64url(Buffer.concat([bytes32(0n), bytes32(s)]))}`;
}

/** The DER form (SEQUENCE of two INTEGERs) of an ES256 token's R||S signature. */
function derOf(token: string): Buffer {
  const [r, s] = rs(token);
  const integer = (value: bigint): Buffer => {
    let hex = value.toString(16);
    if (hex.length % 2) hex = `0${hex}`;
    let body = Buffer.from(hex, 'hex');
    if (body[0]! & 0x80) body = Buffer.concat([Buffer.from([0]), body]);
    return Buffer.concat([Buffer.from([0x02, body.length]), body]);
  };
  const content = Buffer.concat([integer(r), integer(s)]);
  return Buffer.concat([Buffer.from([0x30, content.length]), content]);
}
