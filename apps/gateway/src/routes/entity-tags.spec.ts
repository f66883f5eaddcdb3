import { versionTag, versionsOf } from './entity-tags';

describe('revocation list entity tags', () => {
  it('names the version', () => {
    expect(versionTag(42)).toBe('"42"');
  });

  it.each([
    [undefined, []],
    ['', []],
    ['"7"', [7]],
    ['W/"7"', [7]],
    ['"3", W/"9" ,"x", *', [3, 9]],
    ['7', []],
    ['"-1"', []],
    ['"1234567890123456"', []],
  ])('reads If-None-Match %p as versions %p', (header, versions) => {
    expect(versionsOf(header)).toEqual(versions);
  });

  it('looks at no more than 16 tags', () => {
    const header = Array.from({ length: 40 }, (_, i) => `"${i}"`).join(',');
    expect(versionsOf(header)).toHaveLength(16);
  });
});
