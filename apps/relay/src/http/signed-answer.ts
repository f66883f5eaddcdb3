// The relay's `Licensing-Signature`: the platform's signed-answer format exactly (a JWS with
// detached payload over the body bytes), signed with the relay's key, so that a client checks it
// with the SDK's verifySignedAnswer and the relay key taken from the verified relay file.
import { type KeyObject, sign } from 'node:crypto';

export const NONCE_HEADER = 'licensing-nonce';
export const SIGNATURE_HEADER = 'licensing-signature';
const ANSWER_TYP = 'licensing-answer+jws';

/** 8 to 128 characters of base64, base64url or a UUID, as the platform accepts. */
export const NONCE = /^[A-Za-z0-9._~+/=-]{8,128}$/;

export interface AnswerSigner {
  /** The relay file's id: the `kid` of every answer. */
  kid: string;
  privateKey: KeyObject;
}

/**
 * The compact JWS over `body` with an empty payload segment. The header binds the request's
 * nonce (absent when the request sent none) and the signing time (`iat`, Unix seconds).
 */
export function signAnswer(
  body: string | Buffer,
  signer: AnswerSigner,
  nonce: string | undefined,
  now: number,
): string {
  const header = Buffer.from(
    JSON.stringify({
      alg: 'EdDSA',
      typ: ANSWER_TYP,
      kid: signer.kid,
      ...(nonce === undefined ? {} : { nonce }),
      iat: Math.floor(now / 1000),
    }),
  ).toString('base64url');
  const payload = (typeof body === 'string' ? Buffer.from(body, 'utf8') : body).toString('base64url');
  const signature = sign(null, Buffer.from(`${header}.${payload}`), signer.privateKey);
  return `${header}..${signature.toString('base64url')}`;
}
