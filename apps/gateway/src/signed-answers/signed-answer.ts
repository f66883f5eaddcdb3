import { KeyObject, sign } from 'node:crypto';
import { DomainError } from '@licensing/shared/errors';

/** The request header that asks for a signed answer, and the answer's header that carries it. */
export const NONCE_HEADER = 'licensing-nonce';
export const SIGNATURE_HEADER = 'licensing-signature';
/** The `typ` of an answer's signature: no license, list or other JWS can be taken for one. */
const ANSWER_TYP = 'licensing-answer+jws';

/** 8 to 128 characters of base64, base64url or a UUID: room for 48+ random bits, nothing to escape. */
const NONCE = /^[A-Za-z0-9._~+/=-]{8,128}$/;

/** An organization's response key, parsed once: what signs its answers. */
export interface AnswerSigner {
  kid: string;
  privateKey: KeyObject;
}

/** The request's nonce, undefined when it sent none; a malformed one is a 400 before anything runs. */
export function nonceOf(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && NONCE.test(value)) return value;
  throw DomainError.validation([
    {
      field: 'Licensing-Nonce',
      message: 'Licensing-Nonce is 8 to 128 characters of A-Z a-z 0-9 . _ ~ + / = -',
    },
  ]);
}

/**
 * A JWS with detached payload (RFC 7515 Appendix F) over `body`, the exact bytes sent: the compact
 * form with an empty payload segment. A verifier puts base64url(body) back between the dots.
 * The protected header binds the request's nonce and the signing time (`iat`, Unix seconds).
 */
export function signAnswer(body: string | Buffer, signer: AnswerSigner, nonce: string, now: Date): string {
  const header = Buffer.from(
    JSON.stringify({
      alg: 'EdDSA',
      typ: ANSWER_TYP,
      kid: signer.kid,
      nonce,
      iat: Math.floor(now.getTime() / 1000),
    }),
  ).toString('base64url');
  const payload = (typeof body === 'string' ? Buffer.from(body, 'utf8') : body).toString('base64url');
  const signature = sign(null, Buffer.from(`${header}.${payload}`), signer.privateKey);
  return `${header}..${signature.toString('base64url')}`;
}
