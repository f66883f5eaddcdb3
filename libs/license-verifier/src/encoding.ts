// Strict base64/base64url and UTF-8 without Buffer, so the same code runs in browsers and edge
// runtimes. One input has one encoding: anything outside the alphabet, wrong padding or non-zero
// padding bits is refused, as the license service refuses it.

const STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();

function lookup(alphabet: string): Int16Array {
  const table = new Int16Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  return table;
}
const STANDARD_LOOKUP = lookup(STANDARD);
const URL_SAFE_LOOKUP = lookup(URL_SAFE);

function encode(bytes: Uint8Array, alphabet: string, pad: boolean): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + alphabet[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + (pad ? '==' : '');
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + (pad ? '=' : '');
  }
  return out;
}

/** Decodes unpadded characters of a checked alphabet; undefined when the padding bits are not zero. */
function decode(text: string, table: Int16Array): Uint8Array | undefined {
  if (text.length % 4 === 1) return undefined;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    value = (value << 6) | table[text.charCodeAt(i)]!;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (value >> bits) & 0xff;
    }
  }
  // The leftover bits must be zero: otherwise two texts would decode to the same bytes.
  if ((value & ((1 << bits) - 1)) !== 0) return undefined;
  return out;
}

export const base64url = (bytes: Uint8Array): string => encode(bytes, URL_SAFE, false);
export const base64 = (bytes: Uint8Array): string => encode(bytes, STANDARD, true);

/** A JWS segment's bytes, or undefined when it is not canonical unpadded base64url. */
export function fromBase64url(segment: string): Uint8Array | undefined {
  if (!BASE64URL.test(segment)) return undefined;
  return decode(segment, URL_SAFE_LOOKUP);
}

/** Standard padded base64 (whitespace already removed), or undefined when it is not canonical. */
export function fromBase64(text: string): Uint8Array | undefined {
  if (text.length === 0 || !BASE64.test(text)) return undefined;
  return decode(text.replace(/=+$/, ''), STANDARD_LOOKUP);
}

/** UTF-8 text, or undefined when the bytes are not UTF-8. */
export function utf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

export const utf8Bytes = (text: string): Uint8Array => utf8Encoder.encode(text);
