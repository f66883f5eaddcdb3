import { randomBytes } from 'node:crypto';

export const SERIAL_SUFFIX_LENGTH = 16;

// Crockford base32: no I, L, O or U, so serials survive being read aloud or retyped.
const CROCKFORD_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

// 16 symbols x 5 bits = 80 bits = 10 bytes exactly, so every symbol takes whole bits (no modulo bias).
const SUFFIX_BYTES = (SERIAL_SUFFIX_LENGTH * 5) / 8;

export const SERIAL_PATTERN = /^LIC-[A-Z0-9]+(-[A-Z0-9]+)*-[0-9A-HJKMNP-TV-Z]{16}$/;

// Checked before upper-casing: toUpperCase maps some non-ASCII letters (e.g. 'ı') onto ASCII ones.
const PRODUCT_CODE_PATTERN = /^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$/;

export function generateSerial(productCode: string): string {
  if (typeof productCode !== 'string' || !PRODUCT_CODE_PATTERN.test(productCode)) {
    throw new RangeError(
      'product code must be ASCII letters and digits in hyphen-separated groups to form a serial',
    );
  }
  return `LIC-${productCode.toUpperCase()}-${crockfordSuffix(randomBytes(SUFFIX_BYTES))}`;
}

function crockfordSuffix(bytes: Buffer): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CROCKFORD_ALPHABET[(buffer >>> bits) & 0x1f];
    }
    // Keep only the bits not yet consumed so the accumulator never outgrows 32-bit arithmetic.
    buffer &= (1 << bits) - 1;
  }
  return out;
}
