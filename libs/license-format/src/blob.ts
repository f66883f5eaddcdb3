import { MalformedJwsError } from './jws';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** license_blob in the API: standard base64 (with padding) of the .lic file's bytes. */
export function blobFromJws(jws: string): string {
  return Buffer.from(jws, 'utf8').toString('base64');
}

/**
 * Strict inverse of blobFromJws. Whitespace is dropped first because blobs get pasted and
 * line-wrapped; anything else outside the base64 alphabet, wrong padding or non-zero padding bits
 * is refused, since Node's decoder would otherwise skip junk and return something.
 */
export function jwsFromBlob(blob: string): string {
  if (typeof blob !== 'string') {
    throw new MalformedJwsError('a license blob is a string');
  }
  const compact = blob.replace(/\s+/g, '');
  if (compact.length === 0 || !BASE64.test(compact)) {
    throw new MalformedJwsError('the license blob is not standard base64');
  }
  const bytes = Buffer.from(compact, 'base64');
  if (bytes.toString('base64') !== compact) {
    throw new MalformedJwsError('the license blob is not canonical base64');
  }
  try {
    return utf8.decode(bytes);
  } catch {
    throw new MalformedJwsError('the license blob does not hold UTF-8 text');
  }
}
