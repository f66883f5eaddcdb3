import { isDateSeconds } from './claims';
import { utf8Bytes } from './encoding';
import { decodeCompactJws, keysFor, someVerifies } from './jws';
import { importPublicKeys, type PublicKeyInput } from './public-key';

export type SignedAnswerErrorCode =
  | 'unsigned'
  | 'malformed'
  | 'unknown_key'
  | 'signature_invalid'
  | 'nonce_mismatch'
  | 'too_old'
  | 'not_yet_signed';

export interface SignedAnswerError {
  code: SignedAnswerErrorCode;
  message: string;
}

export interface SignedAnswerResult {
  /** True only when `errors` is empty: the body is what the service said, to this request. */
  valid: boolean;
  errors: SignedAnswerError[];
  /** When the service signed it (the header's `iat`), whenever the signature could be decoded. */
  signed_at: string | null;
}

export interface SignedAnswer {
  /** The answer's body exactly as received (the bytes, or the text before any parsing). */
  body: string | Uint8Array;
  /** The `Licensing-Signature` header; null or undefined when the answer had none. */
  signature: string | null | undefined;
  /** The `Licensing-Nonce` this request sent: an answer to another request is refused. */
  nonce: string;
}

export interface SignedAnswerOptions {
  /** The time to check against (default: now). */
  now?: Date | number;
  /** How old a signature may be (default 300 seconds). */
  maxAgeSeconds?: number;
  /** Leeway for a clock ahead of the service's (default 60 seconds). */
  clockToleranceSeconds?: number;
}

const MESSAGES: Record<SignedAnswerErrorCode, string> = {
  unsigned: 'The answer carries no Licensing-Signature',
  malformed: 'Licensing-Signature is not a signed answer',
  unknown_key: 'The answer was signed by a key this key set does not hold',
  signature_invalid: 'The signature does not verify over this body',
  nonce_mismatch: 'The answer was signed for another request (its nonce is not the one sent)',
  too_old: 'The signature is older than the maximum age',
  not_yet_signed: 'The signature is dated in the future',
};

const ANSWER_TYP = 'licensing-answer+jws';

/**
 * Checks an online answer of verify, validate, check-revocation or sync against its
 * `Licensing-Signature` (a JWS with detached payload over the body), with the organization's
 * response keys (`GET /organizations/current/response-keys`, shipped with the application): that
 * the service signed these very bytes, for the nonce this request sent, recently. Rejects (throws)
 * only when the key is unusable.
 */
export async function verifySignedAnswer(
  answer: SignedAnswer,
  publicKey: PublicKeyInput,
  options: SignedAnswerOptions = {},
): Promise<SignedAnswerResult> {
  const keys = await importPublicKeys(publicKey);
  if (!answer.signature) return result(['unsigned'], null);
  const body = typeof answer.body === 'string' ? utf8Bytes(answer.body) : answer.body;
  const decoded = decodeCompactJws(answer.signature.trim(), body);
  const iat = decoded?.header['iat'];
  if (!decoded || decoded.header['typ'] !== ANSWER_TYP || typeof iat !== 'number' || !isDateSeconds(iat)) {
    return result(['malformed'], null);
  }
  const codes: SignedAnswerErrorCode[] = [];
  const candidates = keysFor(keys, decoded.header['kid']);
  if (candidates.length === 0) codes.push('unknown_key');
  else if (!(await someVerifies(decoded, candidates))) codes.push('signature_invalid');
  if (decoded.header['nonce'] !== answer.nonce) codes.push('nonce_mismatch');
  const now = options.now === undefined ? Date.now() : new Date(options.now).getTime();
  const maxAgeMs = (options.maxAgeSeconds ?? 300) * 1000;
  const toleranceMs = (options.clockToleranceSeconds ?? 60) * 1000;
  if (iat * 1000 < now - maxAgeMs - toleranceMs) codes.push('too_old');
  if (iat * 1000 > now + toleranceMs) codes.push('not_yet_signed');
  return result(codes, new Date(iat * 1000).toISOString());
}

const result = (codes: SignedAnswerErrorCode[], signedAt: string | null): SignedAnswerResult => ({
  valid: codes.length === 0,
  errors: codes.map((code) => ({ code, message: MESSAGES[code] })),
  signed_at: signedAt,
});
