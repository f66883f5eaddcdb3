// The slice of WebCrypto this package uses, typed here so that it compiles the same against the
// DOM's lib and Node's types, and found at call time so that importing the package never throws.

/** An imported key, opaque to this package (a CryptoKey). */
export type WebCryptoKey = object;

export type VerifyAlgorithm =
  { name: 'Ed25519' } | { name: 'ECDSA'; hash: 'SHA-256' } | { name: 'RSA-PSS'; saltLength: number };

export type ImportAlgorithm =
  { name: 'Ed25519' } | { name: 'ECDSA'; namedCurve: 'P-256' } | { name: 'RSA-PSS'; hash: 'SHA-256' };

export interface Subtle {
  importKey(
    format: 'spki' | 'jwk',
    keyData: Uint8Array | Record<string, unknown>,
    algorithm: ImportAlgorithm,
    extractable: boolean,
    keyUsages: string[],
  ): Promise<WebCryptoKey>;
  generateKey(
    algorithm: { name: 'Ed25519' },
    extractable: boolean,
    keyUsages: string[],
  ): Promise<{ publicKey: WebCryptoKey; privateKey: WebCryptoKey }>;
  exportKey(format: 'jwk', key: WebCryptoKey): Promise<object>;
  sign(algorithm: { name: 'Ed25519' }, key: WebCryptoKey, data: Uint8Array): Promise<ArrayBuffer>;
  verify(
    algorithm: VerifyAlgorithm,
    key: WebCryptoKey,
    signature: Uint8Array,
    data: Uint8Array,
  ): Promise<boolean>;
}

/** Random bytes from the runtime's CSPRNG. */
export function randomBytes(length: number): Uint8Array {
  const crypto = (globalThis as { crypto?: { getRandomValues?: (array: Uint8Array) => Uint8Array } }).crypto;
  if (!crypto?.getRandomValues) throw new Error('crypto.getRandomValues is not available in this runtime');
  return crypto.getRandomValues(new Uint8Array(length));
}

export function subtle(): Subtle {
  const found = (globalThis as { crypto?: { subtle?: Subtle } }).crypto?.subtle;
  if (!found) {
    // Browsers expose crypto.subtle only in secure contexts (https, localhost).
    throw new Error('WebCrypto (globalThis.crypto.subtle) is not available in this runtime');
  }
  return found;
}
