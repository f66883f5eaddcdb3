// The product's public key as the vendor hands it over: a PEM (SPKI), a JWK or JWK Set, or the
// platform's `GET /products/:id/public-key` answer, which also names the product.
import { readFile } from 'node:fs/promises';
import {
  importPublicKey,
  type LicensePublicKey,
  type PublicJwk,
  type PublicKeyInput,
} from '@licensing/license-verifier';

export interface ProductKey {
  keys: LicensePublicKey[];
  /** The product the key belongs to, when the key file says so. */
  productId: string | undefined;
}

export class ProductKeyError extends Error {
  override readonly name = 'ProductKeyError';
}

/** Reads and imports the product public key in `file`. */
export async function readProductKey(file: string): Promise<ProductKey> {
  const text = await readFile(file, 'utf8').catch(() => {
    throw new ProductKeyError(`cannot read the product public key ${file}`);
  });
  return parseProductKey(text);
}

export async function parseProductKey(text: string): Promise<ProductKey> {
  let input: PublicKeyInput = text;
  let productId: string | undefined;
  if (text.trim().startsWith('{')) {
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new ProductKeyError('the product public key is neither a PEM nor JSON');
    }
    if (typeof json['public_key'] === 'string') {
      input = json['public_key'];
      if (typeof json['product_id'] === 'string') productId = json['product_id'];
    } else {
      input = json as unknown as PublicKeyInput;
    }
  }
  try {
    const sources = isJwkSet(input) ? input.keys : [input as string | PublicJwk];
    if (sources.length === 0) throw new Error('the JWK Set holds no keys');
    return { keys: await Promise.all(sources.map((key) => importPublicKey(key))), productId };
  } catch (error) {
    throw new ProductKeyError(
      `unusable product public key: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

const isJwkSet = (value: PublicKeyInput): value is { keys: PublicJwk[] } =>
  typeof value === 'object' && value !== null && 'keys' in value && Array.isArray(value.keys);
