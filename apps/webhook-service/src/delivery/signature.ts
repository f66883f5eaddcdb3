import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and 32 random bytes in base64url. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * `Licensing-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`: HMAC-SHA256 keyed with the whole
 * secret string (prefix included) over `<t>.<raw body>`, one `v1=` per secret that is valid now
 * (two while a rotated-out secret is still honoured, the newest first).
 */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  const signatures = secrets.map(
    (secret) => `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`,
  );
  return [`t=${timestamp}`, ...signatures].join(',');
}
