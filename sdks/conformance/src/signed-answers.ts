// Signed answers: the gateway's Licensing-Signature over an answer's body (a JWS with detached
// payload), made by the gateway's own signAnswer with an organization's response key.
import { createHmac, sign } from 'node:crypto';
import { signAnswer } from '../../../apps/gateway/src/signed-answers/signed-answer';
import type { Context } from './context';
import { b64url, jsonSegment, parts } from './jose';
import type { TestKey } from './test-keys';
import { iso, NOW, publishedJwk, VectorFileBuilder, type VectorFile } from './vector-file';

const NONCE = 'n-4b1f6c2e9a7d40e8b3c5';
const BODY =
  '{"license_serial":"LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC","valid":true,"status":"active",' +
  '"checked_at":"2027-03-01T12:00:00.000Z","features":["export","pro"]}';

export function signedAnswerVectors(context: Context): VectorFile {
  const { keys } = context;
  const file = new VectorFileBuilder(
    'signed-answer',
    'Answers of verify, validate, check-revocation and sync with their Licensing-Signature header: ' +
      "a JWS with detached payload over the body's bytes, signed with the organization's response key.",
  );
  const active = keys['response-ed25519']!;
  const retired = keys['response-ed25519-retired']!;
  // The response keys as GET /v1/organizations/current/response-keys publishes them.
  const responseKeys = file.key('response-keys.jwks', {
    jwks: {
      keys: [publishedJwk(active, { status: 'active' }), publishedJwk(retired, { status: 'retired' })],
    },
  });
  const signed = (key: TestKey, body = BODY, nonce = NONCE, at = NOW): string =>
    signAnswer(body, { kid: key.kid!, privateKey: key.privateKey }, nonce, new Date(at * 1000));
  const add = (
    id: string,
    description: string,
    input: { body: string; signature: string | null; nonce: string },
    errors: string[],
    options: Record<string, unknown> = {},
    key = responseKeys,
  ): void => {
    const header = (() => {
      try {
        return parts(input.signature!.trim()).header;
      } catch {
        return undefined;
      }
    })();
    const iat = header?.['iat'];
    file.add({
      id,
      description,
      key,
      input,
      options: { now: NOW, ...options },
      expected: {
        valid: errors.length === 0,
        errors,
        signed_at: errors.includes('malformed') || errors.includes('unsigned') ? null : iso(iat as number),
      },
    });
  };
  const answer = (signature: string | null, body = BODY, nonce = NONCE) => ({ body, signature, nonce });
  const genuine = signed(active);

  add(
    'valid',
    'An answer signed a second ago, with the published JWK Set',
    answer(signed(active, BODY, NONCE, NOW - 1)),
    [],
  );
  add(
    'valid-pem',
    'The same answer, verified with the key as a PEM',
    answer(genuine),
    [],
    {},
    file.pem(active),
  );
  add(
    'valid-retired-key',
    'An answer signed with the retired key, still published',
    answer(signed(retired)),
    [],
  );
  add(
    'valid-non-ascii-body',
    'A body with non-ASCII characters, signed over its UTF-8 bytes',
    answer(signed(active, '{"customer":"Zoë Ångström ☃ 😀"}'), '{"customer":"Zoë Ångström ☃ 😀"}'),
    [],
  );
  add('valid-empty-body', 'An empty body', answer(signed(active, ''), ''), []);
  add(
    'signature-whitespace',
    'The header value with surrounding whitespace: trimmed',
    answer(` ${genuine}\r\n`),
    [],
  );

  add('unsigned-null', 'An answer without Licensing-Signature', answer(null), ['unsigned']);
  add('unsigned-empty', 'An empty Licensing-Signature', answer(''), ['unsigned']);
  add(
    'body-changed',
    'One character of the body changed',
    answer(genuine, BODY.replace('"valid":true', '"valid":fals')),
    ['signature_invalid'],
  );
  add(
    'body-reserialized',
    'The same JSON, written with spaces: other bytes',
    answer(genuine, JSON.stringify(JSON.parse(BODY), null, 1)),
    ['signature_invalid'],
  );
  add('body-trailing-newline', 'The body with a final newline', answer(genuine, `${BODY}\n`), [
    'signature_invalid',
  ]);
  add(
    'nonce-mismatch',
    'An answer to another request (another nonce)',
    answer(genuine, BODY, 'n-another-request-0001'),
    ['nonce_mismatch'],
  );

  // Age: at most max_age_seconds (300 unless said) old, plus the clock tolerance (60 unless said).
  const aged = (
    id: string,
    description: string,
    age: number,
    errors: string[],
    options: Record<string, unknown> = {},
  ) => add(`age/${id}`, description, answer(signed(active, BODY, NONCE, NOW - age)), errors, options);
  aged('at-limit', 'Signed 360 s ago: 300 s of age and 60 s of tolerance', 360, []);
  aged('too-old', 'Signed 361 s ago', 361, ['too_old']);
  aged(
    'custom-max-age',
    'Signed 91 s ago with max_age_seconds 30 (and 60 s of tolerance): too old',
    91,
    ['too_old'],
    {
      max_age_seconds: 30,
    },
  );
  aged(
    'custom-max-age-within',
    'Signed 90 s ago with max_age_seconds 30: within it and the tolerance',
    90,
    [],
    {
      max_age_seconds: 30,
      clock_tolerance_seconds: 60,
    },
  );
  aged('ahead-within-tolerance', 'Signed 60 s in the future', -60, []);
  aged('ahead-beyond-tolerance', 'Signed 61 s in the future', -61, ['not_yet_signed']);
  aged('ahead-no-tolerance', 'Signed 1 s in the future, with no clock tolerance', -1, ['not_yet_signed'], {
    clock_tolerance_seconds: 0,
  });
  aged('old-no-tolerance', 'Signed 301 s ago, with no clock tolerance', 301, ['too_old'], {
    clock_tolerance_seconds: 0,
  });

  add('unknown-kid', 'Signed with a key the set does not hold', answer(signed(keys['other-ed25519']!)), [
    'unknown_key',
  ]);
  add(
    'product-key',
    "Signed with the product's key pair: not a response key",
    answer(signed(keys['product-ed25519']!)),
    ['unknown_key'],
  );
  add(
    'wrong-key-same-kid',
    "Signed with another key under the active key's kid",
    answer(signed({ ...keys['other-ed25519']!, kid: active.kid })),
    ['signature_invalid'],
  );
  add(
    'every-error',
    'Another nonce, and too old: both errors',
    answer(signed(active, BODY, NONCE, NOW - 1000), BODY, 'n-another-request-0001'),
    ['nonce_mismatch', 'too_old'],
  );

  // Headers signed by hand: what signAnswer never writes.
  const detached = (header: Record<string, unknown>, body = BODY, key = active): string => {
    const h = jsonSegment(header);
    return `${h}..${b64url(sign(null, Buffer.from(`${h}.${b64url(body)}`), key.privateKey))}`;
  };
  const base = { alg: 'EdDSA', typ: 'licensing-answer+jws', kid: active.kid, nonce: NONCE, iat: NOW };
  add(
    'iat-fraction',
    'iat with a fraction of a second: kept, to the millisecond',
    answer(detached({ ...base, iat: NOW - 0.5 })),
    [],
  );
  add('iat-missing', 'A header without iat', answer(detached({ ...base, iat: undefined })), ['malformed']);
  add('iat-string', 'iat as a string', answer(detached({ ...base, iat: String(NOW) })), ['malformed']);
  add(
    'iat-beyond-dates',
    'iat beyond what a JavaScript Date holds',
    answer(detached({ ...base, iat: 1e20 })),
    ['malformed'],
  );
  add(
    'typ-license',
    'A signature typed as a license file',
    answer(detached({ ...base, typ: 'license+jwt' })),
    ['malformed'],
  );
  add('typ-missing', 'A signature without typ', answer(detached({ ...base, typ: undefined })), ['malformed']);
  add('crit', 'A header with a crit member', answer(detached({ ...base, crit: ['nonce'] })), [
    'signature_invalid',
  ]);
  add(
    'alg-Ed25519',
    'alg "Ed25519" (RFC 9864): the same algorithm',
    answer(detached({ ...base, alg: 'Ed25519' })),
    [],
  );
  const [h, , s] = genuine.split('.') as [string, string, string];
  add(
    'payload-attached',
    'The body put back between the dots: not a detached signature',
    answer(`${h}.${b64url(BODY)}.${s}`),
    ['malformed'],
  );
  add(
    'alg-none',
    'alg none with no signature',
    answer(`${jsonSegment({ ...parts(genuine).header, alg: 'none' })}..`),
    ['signature_invalid'],
  );
  const hmacHeader = jsonSegment({ ...parts(genuine).header, alg: 'HS256' });
  add(
    'alg-hs256',
    "HS256 keyed with the response key's PEM text",
    answer(
      `${hmacHeader}..${b64url(
        createHmac('sha256', active.pem)
          .update(`${hmacHeader}.${b64url(BODY)}`)
          .digest(),
      )}`,
    ),
    ['signature_invalid'],
  );
  add('two-segments', 'A signature with one dot', answer(genuine.replace('..', '.')), ['malformed']);
  add(
    'signature-not-base64url',
    'A signature segment with a character outside base64url',
    answer(`${genuine.slice(0, -1)}*`),
    ['malformed'],
  );
  return file.build();
}
