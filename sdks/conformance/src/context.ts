// What every vector generator is given, and helpers they share.
import { blobFromJws, decodeJws, verifyJwsSignature } from '@licensing/license-format';
import type { SignaturePool } from './signature-pool';
import type { SigningAlgorithm, TestKey } from './test-keys';
import { iso } from './vector-file';

export interface Context {
  keys: Record<string, TestKey>;
  pool: SignaturePool;
}

export const ALGORITHMS: SigningAlgorithm[] = ['ed25519', 'ecdsa-p256', 'rsa-3072'];

/** The organization, product and license the vectors are about. */
export const ORG_ID = '0d8f2c64-3f55-4b7e-a0d4-6d7b8a9c0e12';
export const PRODUCT_ID = '9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d';
export const OTHER_PRODUCT_ID = '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
export const PRODUCT_CODE = 'photo-editor';
export const LICENSE_ID = '4b0c5d0e-8a43-4a8b-9d0b-2f8f3c1e6a11';
export const SERIAL = 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC';
/** A machine fingerprint, as the SDKs compute one: SHA-256 hex. */
export const FINGERPRINT = '3b9e5f0a1c7d2e4b6a8f9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f';
export const OTHER_FINGERPRINT = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';

export const date = (seconds: number): Date => new Date(seconds * 1000);

/**
 * A token the platform just signed, with its signature swapped for a committed one over the same
 * bytes when that one still verifies (randomized algorithms). The check is the platform's own.
 */
export function stable(context: Context, token: string, key: TestKey): string {
  const cut = token.lastIndexOf('.');
  const signingInput = token.slice(0, cut);
  const fresh = Buffer.from(token.slice(cut + 1), 'base64url');
  const signature = context.pool.signature(
    signingInput,
    () => fresh,
    (candidate) =>
      verifyJwsSignature(decodeJws(`${signingInput}.${candidate.toString('base64url')}`), key.publicKey),
  );
  return `${signingInput}.${signature}`;
}

/** The license a file holds, as every SDK's verifier reports it (README: "The license summary"). */
export function licenseSummary(token: string, errors: string[]): Record<string, unknown> {
  const [headerSegment, payloadSegment] = token.trim().split('.') as [string, string];
  const header = JSON.parse(Buffer.from(headerSegment, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
  const c = JSON.parse(Buffer.from(payloadSegment, 'base64url').toString('utf8')) as Record<string, any>;
  return {
    license_id: c['jti'],
    serial: c['sub'],
    organization_id: c['iss'],
    product_id: c['product_id'],
    product_code: c['product_code'],
    license_type: c['license_type'],
    customer_id: c['customer_id'],
    customer_email: c['customer_email'],
    features: c['features'],
    entitlements: c['entitlements'] ?? [],
    max_seats: c['max_seats'],
    hardware_binding: c['hardware_binding'] && { fingerprint: c['hardware_binding'].fingerprint },
    fingerprint: c['fingerprint'] ?? null,
    valid_from: c['valid_from'],
    valid_until: c['valid_until'],
    issued_at: iso(c['iat']),
    expires_at: c['exp'] === undefined ? null : iso(c['exp']),
    is_expired: errors.includes('expired'),
    is_file_expired: errors.includes('file_expired'),
    ...(c['policy'] === undefined ? {} : { policy: c['policy'] }),
    key_id: typeof header['kid'] === 'string' ? header['kid'] : null,
    algorithm: header['alg'],
  };
}

export { blobFromJws };
