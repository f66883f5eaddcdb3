import { DomainError } from '@licensing/shared/errors';
import { MAX_BODY_DEPTH, assertWellFormed, decodeUtf8Body, findIllFormedInput } from './well-formed-input';

const nestedArrays = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i += 1) value = [value];
  return value;
};

describe('findIllFormedInput', () => {
  it('accepts ordinary JSON values, control characters and astral characters included', () => {
    expect(
      findIllFormedInput({ a: 'tab\t', b: ['\u0007', '\ud83d\ude00'], c: { d: 1, e: null } }),
    ).toBeUndefined();
    expect(findIllFormedInput(null)).toBeUndefined();
    expect(findIllFormedInput(42)).toBeUndefined();
  });

  it('names the dotted path of a NUL character or a lone surrogate', () => {
    expect(findIllFormedInput({ a: { b: ['ok', 'x\u0000'] } })).toEqual({
      field: 'a.b.1',
      message: 'a.b.1 must not contain the NUL character',
    });
    expect(findIllFormedInput({ email: '\udfff@x' })?.field).toBe('email');
    expect(findIllFormedInput({ email: '\ud800' })?.message).toMatch(/lone surrogate/);
  });

  it('checks keys as well as values', () => {
    expect(findIllFormedInput({ outer: { ['k\u0000']: 1 } })).toEqual({
      field: 'outer',
      message: 'a key of outer must not contain the NUL character',
    });
  });

  it(`allows ${MAX_BODY_DEPTH} levels of nesting and refuses one more, without recursion`, () => {
    expect(findIllFormedInput(nestedArrays(MAX_BODY_DEPTH))).toBeUndefined();
    expect(findIllFormedInput(nestedArrays(MAX_BODY_DEPTH + 1))?.message).toMatch(/deeper than 32/);
    expect(findIllFormedInput(nestedArrays(1_000_000))).toBeDefined();
  });

  it('assertWellFormed throws a validation DomainError', () => {
    expect(() => assertWellFormed({ q: '\u0000' })).toThrow(DomainError);
    expect(() => assertWellFormed({ q: 'fine' })).not.toThrow();
  });
});

describe('decodeUtf8Body', () => {
  it('decodes UTF-8 and refuses invalid bytes instead of replacing them', () => {
    expect(decodeUtf8Body(Buffer.from('{"a":"é"}'))).toBe('{"a":"é"}');
    expect(() => decodeUtf8Body(Buffer.from([0x7b, 0xff, 0x7d]))).toThrow(DomainError);
    // An encoded surrogate (CESU-8 style) is not UTF-8 either.
    expect(() => decodeUtf8Body(Buffer.from([0xed, 0xbf, 0xbf]))).toThrow(DomainError);
  });
});
