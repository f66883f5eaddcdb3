import { createHash } from 'node:crypto';
import { DomainError } from '@licensing/shared/errors';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** 1 to 255 printable ASCII characters (space included, as HTTP trims it only at the ends). */
const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/** Deeper than any request body of the API; a limit keeps a hostile body from exhausting the stack. */
const MAX_DEPTH = 64;

/** The Idempotency-Key a request carries: undefined when it has none, a 400 when it is malformed. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header === 'string' && IDEMPOTENCY_KEY.test(header)) return header;
  throw DomainError.validation(
    [{ field: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 printable ASCII characters' }],
    'The Idempotency-Key header is invalid',
  );
}

/**
 * A parsed JSON value written in one canonical way: object members sorted by name, no whitespace,
 * arrays in their order. Two bodies that differ only in member order or formatting have the same
 * canonical form; `undefined` (no body at all) is written as `null`.
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) {
    throw new DomainError(
      'validation_failed',
      `The request body is nested more than ${MAX_DEPTH} levels deep`,
    );
  }
  if (value === undefined || value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item, depth + 1)).join(',')}]`;
  if (typeof value === 'object') {
    const members = Object.keys(value)
      .filter((name) => (value as Record<string, unknown>)[name] !== undefined)
      .sort()
      .map(
        (name) =>
          `${JSON.stringify(name)}:${canonicalJson((value as Record<string, unknown>)[name], depth + 1)}`,
      );
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 (hex) of the canonical form: what is stored to recognise a repeat of the same request. */
export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}
