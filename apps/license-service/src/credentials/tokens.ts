import { createHash, randomBytes } from 'node:crypto';

/** A new token: `<kind>_` and 256 random bits in base64url; only its SHA-256 is ever stored. */
export function newToken(kind: 'lt' | 'mt'): { token: string; hash: string; prefix: string } {
  const token = `${kind}_${randomBytes(32).toString('base64url')}`;
  return { token, hash: createHash('sha256').update(token).digest('hex'), prefix: token.slice(0, 10) };
}
