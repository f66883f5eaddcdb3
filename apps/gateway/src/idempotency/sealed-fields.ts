import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** How a sealed member is stored in place of its value. */
interface Sealed {
  sealed: string;
}

const isSealed = (value: unknown): value is Sealed =>
  typeof value === 'object' && value !== null && typeof (value as Sealed).sealed === 'string';

function keyOf(secret: string, context: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, context, 'licensing idempotent replay', 32));
}

/**
 * A copy of `body` whose named members (a secret shown only once, such as a new API key) are
 * AES-256-GCM-encrypted under a key derived from `secret`, the caller's own API key, which is
 * never stored: the stored answer holds nothing usable, and only that caller can have it replayed.
 */
export function sealFields(
  body: unknown,
  fields: readonly string[],
  secret: string,
  context: string,
): unknown {
  if (fields.length === 0 || typeof body !== 'object' || body === null) return body;
  const copy = { ...(body as Record<string, unknown>) };
  for (const field of fields) {
    if (!(field in copy)) continue;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', keyOf(secret, context), iv);
    const sealed = Buffer.concat([cipher.update(JSON.stringify(copy[field]), 'utf8'), cipher.final()]);
    copy[field] = {
      sealed: Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64'),
    } satisfies Sealed;
  }
  return copy;
}

/** The body with its sealed members opened; undefined when `secret` is not the one they were sealed with. */
export function unsealFields(
  body: unknown,
  fields: readonly string[],
  secret: string,
  context: string,
): unknown {
  if (fields.length === 0 || typeof body !== 'object' || body === null) return body;
  const copy = { ...(body as Record<string, unknown>) };
  for (const field of fields) {
    const value = copy[field];
    if (!isSealed(value)) continue;
    const bytes = Buffer.from(value.sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret, context), bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
      copy[field] = JSON.parse(plain.toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  }
  return copy;
}
