// Activation files of air-gapped machines, made by the license service's activationFileClaims and
// signed with the product's key pair by signJws, as the service signs them.
import { signJws } from '@licensing/license-format';
import {
  ACTIVATION_TYP,
  activationFileClaims,
  type ActivationFileInput,
} from '../../../apps/license-service/src/activations/activation-file';
import {
  ALGORITHMS,
  date,
  FINGERPRINT,
  LICENSE_ID,
  ORG_ID,
  OTHER_FINGERPRINT,
  OTHER_PRODUCT_ID,
  PRODUCT_CODE,
  PRODUCT_ID,
  SERIAL,
  stable,
  type Context,
} from './context';
import { algNone, hs256, nonCanonicalSignature, parts, signRaw, withPayload } from './jose';
import type { TestKey } from './test-keys';
import { DAY, iso, NOW, publishedJwk, VectorFileBuilder, type VectorFile } from './vector-file';

const NONCE = 'q8Zr3mN1xV5tK7wB2yH4jL6pD9sF0gA1';
/** The machine's Ed25519 public key, from its request (the private half never leaves it). */
const MACHINE_KEY = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' } as const;
const OTHER_MACHINE_KEY = {
  kty: 'OKP',
  crv: 'Ed25519',
  x: 'fUHyO2FEAmvRu3Zz5iV0lj0BMHMLDvjQeuB0sajZ5RY',
} as const;
const ISSUED = NOW - DAY;
const EXPIRES = NOW + 29 * DAY;

const INPUT: ActivationFileInput = {
  activationId: 'e0d1c2b3-a4f5-4e6d-8c7b-9a0f1e2d3c4b',
  serial: SERIAL,
  orgId: ORG_ID,
  licenseId: LICENSE_ID,
  productId: PRODUCT_ID,
  productCode: PRODUCT_CODE,
  features: ['export', 'pro'],
  fingerprint: FINGERPRINT,
  components: { cpu: 'GenuineIntel-06-8C-01', disk: 'S4EVNX0R123456' },
  nonce: NONCE,
  machineKey: MACHINE_KEY,
  issuedAt: date(ISSUED),
  expiresAt: date(EXPIRES),
};

export function activationVectors(context: Context): VectorFile {
  const { keys, pool } = context;
  const file = new VectorFileBuilder(
    'activation',
    'Activation files (typ activation+jwt) that POST /v1/activations/offline answers for an air-gapped ' +
      "machine's request, signed with the product key pair.",
  );
  const activation = (key: TestKey, input: Partial<ActivationFileInput> = {}): string =>
    stable(
      context,
      signJws(
        activationFileClaims({ ...INPUT, ...input }),
        { kid: key.kid!, privateKey: key.privateKey },
        ACTIVATION_TYP,
      ),
      key,
    );
  const add = (
    id: string,
    description: string,
    key: string,
    text: string,
    options: Record<string, unknown>,
    errors: string[],
  ): void => {
    let summary: Record<string, unknown> | null = null;
    if (!errors.includes('malformed')) {
      const c = parts(text.trim()).payload as Record<string, any>;
      summary = {
        activation_id: c['jti'],
        serial: c['sub'],
        license_id: c['license_id'],
        organization_id: c['iss'],
        product_id: c['product_id'],
        product_code: c['product_code'],
        features: c['features'],
        fingerprint: c['fingerprint'],
        components: c['components'],
        issued_at: iso(c['iat']),
        expires_at: iso(c['exp']),
      };
    }
    file.add({
      id,
      description,
      key,
      input: { text },
      options: { now: NOW, ...options },
      expected: { valid: errors.length === 0, errors, activation: summary },
    });
  };
  const matching = {
    nonce: NONCE,
    machine_key: MACHINE_KEY,
    fingerprint: FINGERPRINT,
    product_id: PRODUCT_ID,
  };

  for (const algorithm of ALGORITHMS) {
    const key = keys[`product-${algorithm}`]!;
    const pem = file.pem(key);
    const token = activation(key);
    const v = (id: string) => `${algorithm}/${id}`;
    add(
      v('valid'),
      `An activation file signed with the ${algorithm} key, every option matching`,
      pem,
      token,
      matching,
      [],
    );
    add(
      v('valid-jwks'),
      'The same file, verified with a JWK Set of the product keys',
      file.key('products.jwks', {
        jwks: { keys: ALGORITHMS.map((name) => publishedJwk(keys[`product-${name}`]!)) },
      }),
      token,
      matching,
      [],
    );
    add(
      v('wrong-key'),
      'The same file, verified with another key of the same algorithm',
      file.pem(keys[`other-${algorithm}`]!),
      token,
      {},
      ['signature_invalid'],
    );
    add(
      v('tampered'),
      'The same file with its exp moved a year later after signing',
      pem,
      withPayload(token, {
        ...parts(token).payload,
        exp: EXPIRES + 365 * DAY,
      }),
      {},
      ['signature_invalid'],
    );
    add(v('alg-none'), 'The same file with alg none and no signature', pem, algNone(token), {}, [
      'signature_invalid',
    ]);
    add(
      v('alg-hs256'),
      'The same file forged as HS256 keyed with the PEM text',
      pem,
      hs256(token, key.pem),
      {},
      ['signature_invalid'],
    );
    add(v('expired'), 'The same file at its exp', pem, token, { now: EXPIRES }, ['expired']);
  }

  const ed = keys['product-ed25519']!;
  const pem = file.pem(ed);
  const token = activation(ed);
  const mismatch = (id: string, description: string, options: Record<string, unknown>, errors: string[]) =>
    add(`context/${id}`, description, pem, token, options, errors);
  mismatch('no-options', 'No nonce, machine key, fingerprint or product given: none checked', {}, []);
  mismatch(
    'nonce-mismatch',
    'An answer to another request',
    { ...matching, nonce: 'another-request-nonce-000000' },
    ['nonce_mismatch'],
  );
  mismatch(
    'machine-key-mismatch',
    "Made for another machine's key",
    { ...matching, machine_key: OTHER_MACHINE_KEY },
    ['machine_key_mismatch'],
  );
  mismatch('fingerprint-mismatch', 'For another machine', { ...matching, fingerprint: OTHER_FINGERPRINT }, [
    'fingerprint_mismatch',
  ]);
  mismatch('product-mismatch', 'For another product', { ...matching, product_id: OTHER_PRODUCT_ID }, [
    'product_mismatch',
  ]);
  mismatch(
    'every-error',
    'Everything wrong at once, and expired: every error, in order',
    {
      nonce: 'another-request-nonce-000000',
      machine_key: OTHER_MACHINE_KEY,
      fingerprint: OTHER_FINGERPRINT,
      product_id: OTHER_PRODUCT_ID,
      now: EXPIRES,
    },
    ['nonce_mismatch', 'machine_key_mismatch', 'fingerprint_mismatch', 'product_mismatch', 'expired'],
  );
  mismatch('before-nbf', 'One second before its nbf', { now: ISSUED - 1 }, ['not_yet_valid']);
  mismatch('at-nbf', 'At its nbf', { now: ISSUED }, []);
  mismatch('before-exp', 'One second before its exp', { now: EXPIRES - 1 }, []);
  mismatch(
    'expired-within-tolerance',
    '30 s past exp with a 60 s clock tolerance',
    { now: EXPIRES + 30, clock_tolerance_seconds: 60 },
    [],
  );
  mismatch(
    'early-within-tolerance',
    '30 s before nbf with a 60 s clock tolerance',
    { now: ISSUED - 30, clock_tolerance_seconds: 60 },
    [],
  );
  add(
    'keys/unknown-kid',
    "A JWK Set without the file's kid",
    file.key('other-ed25519.jwks', {
      jwks: { keys: [publishedJwk(keys['other-ed25519']!)] },
    }),
    token,
    {},
    ['unknown_key'],
  );
  add(
    'components-empty',
    'A machine that sent no components',
    pem,
    activation(ed, { components: {} }),
    {},
    [],
  );

  const claims = parts(token).payload;
  const raw = (payload: unknown, typ = 'activation+jwt') =>
    signRaw(pool, { alg: 'EdDSA', typ, kid: ed.kid }, JSON.stringify(payload), ed);
  const malformed = (id: string, description: string, text: string) =>
    add(`malformed/${id}`, description, pem, text, {}, ['malformed']);
  malformed('license-file', 'A license file given as an activation file', raw(claims, 'license+jwt'));
  malformed(
    'request-file',
    "The machine's request file typed activation-request+jwt",
    raw(claims, 'activation-request+jwt'),
  );
  malformed('cnf-missing', 'No cnf (the machine key)', raw({ ...claims, cnf: undefined }));
  malformed(
    'cnf-x-missing',
    'A cnf.jwk without x',
    raw({ ...claims, cnf: { jwk: { kty: 'OKP', crv: 'Ed25519' } } }),
  );
  malformed('components-string', 'components as a string', raw({ ...claims, components: 'cpu' }));
  malformed(
    'components-number-value',
    'A component that is a number',
    raw({ ...claims, components: { cpu: 1 } }),
  );
  malformed('features-missing', 'No features', raw({ ...claims, features: undefined }));
  malformed('nonce-missing', 'No nonce', raw({ ...claims, nonce: undefined }));
  malformed('exp-fraction', 'exp with a fraction', raw({ ...claims, exp: EXPIRES + 0.5 }));
  malformed('exp-beyond-dates', 'exp beyond what a JavaScript Date holds', raw({ ...claims, exp: 9e15 }));
  malformed('version-2', 'v 2', raw({ ...claims, v: 2 }));
  malformed('truncated', 'The file cut after its header', token.slice(0, token.indexOf('.') + 1));
  malformed(
    'non-canonical-signature',
    "The signature's last character leaves padding bits set",
    nonCanonicalSignature(token),
  );
  add('whitespace', 'The file with surrounding whitespace: trimmed', pem, `\n${token}\n`, {}, []);
  return file.build();
}
