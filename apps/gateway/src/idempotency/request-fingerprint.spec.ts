import { DomainError } from '@licensing/shared/errors';
import { canonicalJson, idempotencyKeyOf, requestHash } from './request-fingerprint';

describe('canonical JSON of a request body', () => {
  it('sorts object members at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('gives the same hash to bodies that differ only in member order and whitespace', () => {
    const first = JSON.parse('{ "name": "Editor",\n  "code": "editor", "tags": ["a", "b"] }') as unknown;
    const second = JSON.parse('{"tags":["a","b"],"code":"editor","name":"Editor"}') as unknown;
    expect(requestHash(first)).toBe(requestHash(second));
    expect(requestHash(first)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('tells apart bodies that differ in a value, in array order, or in a type', () => {
    const hashes = [
      { a: 1 },
      { a: 2 },
      { a: '1' },
      { a: [1, 2] },
      { a: [2, 1] },
      { a: null },
      {},
      [],
      undefined,
    ].map(requestHash);
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  it('writes numbers as JSON does, so 1.0 and 1 are one value', () => {
    expect(canonicalJson(JSON.parse('{"n": 1.0, "m": 1e2}'))).toBe('{"m":100,"n":1}');
  });

  it('escapes member names and strings, so a name cannot forge structure', () => {
    expect(canonicalJson({ 'a":1,"b': 2 })).toBe('{"a\\":1,\\"b":2}');
    expect(canonicalJson({ s: '\u0000\n"' })).toBe('{"s":"\\u0000\\n\\""}');
  });

  it('refuses a body nested deeper than any request of the API, with a 400 rather than a crash', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(() => canonicalJson(deep)).toThrow(DomainError);
  });
});

describe('the Idempotency-Key header', () => {
  it('is optional', () => {
    expect(idempotencyKeyOf(undefined)).toBeUndefined();
  });

  it('accepts 1 to 255 printable ASCII characters', () => {
    expect(idempotencyKeyOf('a')).toBe('a');
    expect(idempotencyKeyOf('order 42: retry #1 ~!')).toBe('order 42: retry #1 ~!');
    expect(idempotencyKeyOf('k'.repeat(255))).toBe('k'.repeat(255));
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a control character', 'a\tb'],
    ['non-ASCII', 'clé'],
  ])('is a 400 validation_failed naming the header when %s', (_, value) => {
    expect(() => idempotencyKeyOf(value)).toThrow(
      expect.objectContaining({
        code: 'validation_failed',
        errors: [expect.objectContaining({ field: 'Idempotency-Key' })],
      }) as Error,
    );
  });

  it('is a 400 when sent twice with different values', () => {
    expect(() => idempotencyKeyOf(['a', 'b'])).toThrow(DomainError);
  });
});
