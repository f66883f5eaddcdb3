import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { verifyActivationFile, verifyLicense, verifySignedAnswer } from './index';

// A JavaScript Date holds 8.64e15 ms either side of 1970. A signed time beyond that cannot be shown
// as ISO 8601: the document is malformed, and the verifier answers so instead of throwing.

const MAX_SECONDS = 8.64e12;
const b64 = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

function signed(header: object, payload: object | undefined, key: KeyObject, body = ''): string {
  const payloadSegment = payload === undefined ? b64(body) : b64(JSON.stringify(payload));
  const input = `${b64(JSON.stringify(header))}.${payloadSegment}`;
  const signature = b64(sign(null, Buffer.from(input), key));
  return payload === undefined ? `${input.split('.')[0]}..${signature}` : `${input}.${signature}`;
}

describe('times outside the range of a Date', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const license = (iat: number, exp?: number) => ({
    v: 1,
    jti: 'l',
    sub: 'LIC-A',
    iss: 'o',
    iat,
    nbf: 0,
    ...(exp === undefined ? {} : { exp }),
    product_id: 'p',
    product_code: 'c',
    license_type: 'perpetual',
    customer_id: null,
    customer_email: null,
    features: [],
    max_seats: 1,
    hardware_binding: null,
    valid_from: '1970-01-01T00:00:00.000Z',
    valid_until: null,
  });
  const header = { alg: 'EdDSA', typ: 'license+jwt' };

  it('a license file: the last second a Date holds is shown, the next one is malformed', async () => {
    const last = await verifyLicense(signed(header, license(MAX_SECONDS), privateKey), pem, { now: 0 });
    expect(last.license?.issued_at).toBe('+275760-09-13T00:00:00.000Z');
    for (const claims of [license(MAX_SECONDS + 1), license(0, -MAX_SECONDS - 1), license(9e15)]) {
      const result = await verifyLicense(signed(header, claims, privateKey), pem, { now: 0 });
      expect(result).toMatchObject({ valid: false, license: null, errors: [{ code: 'malformed' }] });
    }
  });

  it('a signed answer whose iat no Date holds is malformed', async () => {
    for (const iat of [1e20, -1e20, MAX_SECONDS + 1]) {
      const signature = signed(
        { alg: 'EdDSA', typ: 'licensing-answer+jws', nonce: 'n0nce-123', iat },
        undefined,
        privateKey,
        '{}',
      );
      const result = await verifySignedAnswer({ body: '{}', signature, nonce: 'n0nce-123' }, pem);
      expect(result).toMatchObject({ valid: false, signed_at: null, errors: [{ code: 'malformed' }] });
    }
  });

  it('an activation file whose exp no Date holds is malformed', async () => {
    const claims = {
      v: 1,
      jti: 'a',
      sub: 'LIC-A',
      iss: 'o',
      license_id: 'l',
      product_id: 'p',
      product_code: 'c',
      features: [],
      fingerprint: 'f',
      components: {},
      nonce: 'n',
      cnf: { jwk: { x: 'x' } },
      iat: 0,
      nbf: 0,
      exp: 9e15,
    };
    const result = await verifyActivationFile(
      signed({ alg: 'EdDSA', typ: 'activation+jwt' }, claims, privateKey),
      pem,
    );
    expect(result).toMatchObject({ valid: false, activation: null, errors: [{ code: 'malformed' }] });
  });
});
