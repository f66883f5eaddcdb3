// Public keys: which a verifier accepts (and as what), and which it refuses with its documented
// error (InvalidPublicKeyError in JavaScript) before looking at any document.
import type { Context } from './context';
import type { TestKey } from './test-keys';
import { publishedJwk, VectorFileBuilder, type KeyInput, type VectorFile } from './vector-file';

type Accepted = { type: 'ed25519' | 'ecdsa-p256' | 'rsa'; alg: string; kid: string | null };

export function publicKeyVectors(context: Context): VectorFile {
  const { keys } = context;
  const file = new VectorFileBuilder(
    'public-key',
    'Public keys as a verifier is given them: a PEM (SPKI), a JWK or a JWK Set. Each is accepted, ' +
      'with the type, JWS algorithm and kid of every key it holds, or refused as unusable.',
  );
  const add = (id: string, description: string, input: KeyInput, accepted: Accepted[] | null): void => {
    file.add({
      id,
      description,
      key: file.key(id, input),
      input: {},
      options: {},
      expected: accepted === null ? { accepted: false } : { accepted: true, keys: accepted },
    });
  };
  const ed = keys['product-ed25519']!;
  const es = keys['product-ecdsa-p256']!;
  const rsa = keys['product-rsa-3072']!;
  const ED: Accepted = { type: 'ed25519', alg: 'EdDSA', kid: null };
  const ES: Accepted = { type: 'ecdsa-p256', alg: 'ES256', kid: null };
  const PS: Accepted = { type: 'rsa', alg: 'PS256', kid: null };
  const withKid = (accepted: Accepted, key: TestKey): Accepted => ({ ...accepted, kid: key.kid! });
  const refused = (name: string) => keys[`refused-${name}`]!;
  const body = (pem: string): string => pem.replace(/-----[A-Z ]+-----|\s/g, '');
  const pemOf = (der: Buffer): string =>
    `-----BEGIN PUBLIC KEY-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END PUBLIC KEY-----\n`;

  // PEM.
  add('pem/ed25519', 'An Ed25519 SPKI PEM', { pem: ed.pem }, [ED]);
  add('pem/ecdsa-p256', 'A P-256 SPKI PEM', { pem: es.pem }, [ES]);
  add('pem/rsa-3072', 'A 3072-bit RSA SPKI PEM', { pem: rsa.pem }, [PS]);
  add(
    'pem/rsa-2048',
    'A 2048-bit RSA SPKI PEM: the smallest accepted',
    { pem: keys['product-rsa-2048']!.pem },
    [PS],
  );
  add('pem/crlf', 'A PEM with CRLF line ends', { pem: ed.pem.replace(/\n/g, '\r\n') }, [ED]);
  add(
    'pem/surrounding-whitespace',
    'A PEM with blank lines and spaces around it',
    { pem: `\n\n  ${ed.pem}  \n` },
    [ED],
  );
  add('pem/rsa-1024', 'A 1024-bit RSA key: too weak', { pem: refused('rsa-1024').pem }, null);
  add(
    'pem/ecdsa-p384',
    'A P-384 key: not a curve licenses are signed with',
    { pem: refused('ecdsa-p384').pem },
    null,
  );
  add('pem/secp256k1', 'A secp256k1 key', { pem: refused('secp256k1').pem }, null);
  add('pem/x25519', 'An X25519 key: for key agreement, not signatures', { pem: refused('x25519').pem }, null);
  add('pem/ed448', 'An Ed448 key', { pem: refused('ed448').pem }, null);
  add(
    'pem/rsa-pss',
    'An RSA key whose SPKI says id-RSASSA-PSS rather than rsaEncryption',
    { pem: refused('rsa-pss').pem },
    null,
  );
  add(
    'pem/private-key',
    'A PKCS#8 private key',
    { pem: ed.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
    null,
  );
  add(
    'pem/pkcs1',
    'An RSA PUBLIC KEY (PKCS#1) block',
    { pem: rsa.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString() },
    null,
  );
  add('pem/two-blocks', 'Two PUBLIC KEY blocks', { pem: `${ed.pem}${es.pem}` }, null);
  add('pem/trailing-text', 'Text after the END line', { pem: `${ed.pem}comment\n` }, null);
  add('pem/one-line', 'The whole PEM on one line', { pem: ed.pem.replace(/\n/g, '') }, null);
  add(
    'pem/non-canonical-base64',
    'A body whose last character before = leaves padding bits set',
    {
      pem: ed.pem.replace(/(.)=\n/, (_, last: string) => `${String.fromCharCode(last.charCodeAt(0) + 1)}=\n`),
    },
    null,
  );
  add(
    'pem/trailing-der-byte',
    'An SPKI followed by one more byte',
    { pem: pemOf(Buffer.concat([Buffer.from(body(ed.pem), 'base64'), Buffer.from([0])])) },
    null,
  );
  add('pem/empty', 'An empty text', { pem: '' }, null);
  add('pem/not-a-pem', 'A text that is no PEM', { pem: 'hello' }, null);

  // JWK.
  const edJwk = ed.jwk;
  add('jwk/ed25519-minimal', 'An Ed25519 JWK with only kty, crv and x', { jwk: edJwk }, [ED]);
  add(
    'jwk/ed25519-published',
    'An Ed25519 JWK as the platform publishes it (kid, alg, use)',
    { jwk: publishedJwk(ed) },
    [withKid(ED, ed)],
  );
  add('jwk/ecdsa-p256', 'A P-256 JWK', { jwk: publishedJwk(es) }, [withKid(ES, es)]);
  add('jwk/rsa-3072', 'An RSA JWK', { jwk: publishedJwk(rsa) }, [withKid(PS, rsa)]);
  add('jwk/alg-Ed25519', 'An Ed25519 JWK whose alg is "Ed25519"', { jwk: { ...edJwk, alg: 'Ed25519' } }, [
    ED,
  ]);
  add('jwk/key-ops-verify', 'key_ops ["verify"]', { jwk: { ...edJwk, key_ops: ['verify'] } }, [ED]);
  add(
    'jwk/unknown-member',
    'A member verifiers do not know (status)',
    { jwk: { ...edJwk, status: 'retired' } },
    [ED],
  );
  add('jwk/alg-mismatch', 'An Ed25519 JWK whose alg is ES256', { jwk: { ...edJwk, alg: 'ES256' } }, null);
  add('jwk/rsa-alg-rs256', 'An RSA JWK whose alg is RS256', { jwk: { ...rsa.jwk, alg: 'RS256' } }, null);
  add('jwk/use-enc', 'use "enc"', { jwk: { ...edJwk, use: 'enc' } }, null);
  add('jwk/key-ops-sign', 'key_ops ["sign"]', { jwk: { ...edJwk, key_ops: ['sign'] } }, null);
  add('jwk/key-ops-string', 'key_ops as a string', { jwk: { ...edJwk, key_ops: 'verify' } }, null);
  add('jwk/kid-number', 'A kid that is a number', { jwk: { ...edJwk, kid: 7 } }, null);
  add('jwk/private', 'A private JWK (with d)', { jwk: ed.privateKey.export({ format: 'jwk' }) }, null);
  add('jwk/oct', 'A symmetric JWK (kty oct)', { jwk: { kty: 'oct', k: 'c2VjcmV0' } }, null);
  add('jwk/kty-missing', 'A JWK without kty', { jwk: { crv: 'Ed25519', x: edJwk['x'] } }, null);
  add('jwk/x-padded', 'An x with = padding', { jwk: { ...edJwk, x: `${edJwk['x']}=` } }, null);
  add(
    'jwk/x-short',
    'An Ed25519 x of 31 bytes',
    { jwk: { ...edJwk, x: Buffer.from(edJwk['x']!, 'base64url').subarray(1).toString('base64url') } },
    null,
  );
  add(
    'jwk/ec-off-curve',
    'A P-256 point that is not on the curve',
    {
      jwk: {
        ...es.jwk,
        y: Buffer.from(
          Buffer.from(es.jwk['y']!, 'base64url').map((byte, i) => (i === 31 ? byte ^ 1 : byte)),
        ).toString('base64url'),
      },
    },
    null,
  );
  add(
    'jwk/ec-y-missing',
    'A P-256 JWK without y',
    { jwk: { kty: 'EC', crv: 'P-256', x: es.jwk['x'] } },
    null,
  );
  add('jwk/ecdsa-p384', 'A P-384 JWK', { jwk: refused('ecdsa-p384').jwk }, null);
  add('jwk/x25519', 'An X25519 JWK', { jwk: refused('x25519').jwk }, null);
  add('jwk/rsa-1024', 'A 1024-bit RSA JWK', { jwk: refused('rsa-1024').jwk }, null);

  // JWK Set.
  add(
    'jwks/three',
    'A JWK Set of three keys with kids',
    {
      jwks: { keys: [publishedJwk(ed), publishedJwk(es), publishedJwk(rsa)] },
    },
    [withKid(ED, ed), withKid(ES, es), withKid(PS, rsa)],
  );
  add('jwks/empty', 'A JWK Set without keys', { jwks: { keys: [] } }, null);
  add(
    'jwks/one-bad-key',
    'A JWK Set with a good key and a P-384 key',
    { jwks: { keys: [publishedJwk(ed), refused('ecdsa-p384').jwk] } },
    null,
  );
  add('jwks/keys-not-array', 'A "JWK Set" whose keys is a string', { jwks: { keys: 'x' } }, null);
  return file.build();
}
