import { generateSerial, SERIAL_PATTERN, SERIAL_SUFFIX_LENGTH } from './serial';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const SAMPLE_SIZE = 10_000;

describe('generateSerial', () => {
  let serials: string[];
  let suffixes: string[];

  beforeAll(() => {
    serials = Array.from({ length: SAMPLE_SIZE }, () => generateSerial('photo-editor'));
    suffixes = serials.map((serial) => serial.slice(-SERIAL_SUFFIX_LENGTH));
  });

  it('builds LIC-<CODE IN CAPITALS>-<16 symbols> from a lowercase product code', () => {
    const serial = generateSerial('photo-editor');
    expect(serial).toMatch(/^LIC-PHOTO-EDITOR-[0-9A-Z]{16}$/);
    expect(serial).toMatch(SERIAL_PATTERN);
  });

  it('keeps digits and single-segment codes', () => {
    expect(generateSerial('cad3d')).toMatch(/^LIC-CAD3D-[0-9A-Z]{16}$/);
    expect(generateSerial('x')).toMatch(/^LIC-X-[0-9A-Z]{16}$/);
  });

  it('uses only the Crockford alphabet in the suffix (never I, L, O or U)', () => {
    for (const suffix of suffixes) {
      expect(suffix).toMatch(/^[0-9A-HJKMNP-TV-Z]{16}$/);
    }
    expect(suffixes.join('')).not.toMatch(/[ILOU]/);
  });

  it('generates 10,000 distinct serials', () => {
    expect(new Set(serials).size).toBe(SAMPLE_SIZE);
  });

  it('uses every one of the 32 symbols at every suffix position', () => {
    for (let position = 0; position < SERIAL_SUFFIX_LENGTH; position++) {
      const seen = new Set(suffixes.map((suffix) => suffix[position]));
      expect([...seen].sort().join('')).toBe(CROCKFORD);
    }
  });

  it('spreads symbols evenly: each count within 10% of the uniform expectation', () => {
    // 160,000 symbols, 5,000 expected each; 10% is about seven standard deviations, so a fair
    // generator does not fail this by chance, while a modulo-biased one would.
    const counts = new Map<string, number>();
    for (const symbol of suffixes.join('')) {
      counts.set(symbol, (counts.get(symbol) ?? 0) + 1);
    }
    const expected = (SAMPLE_SIZE * SERIAL_SUFFIX_LENGTH) / CROCKFORD.length;
    expect(counts.size).toBe(CROCKFORD.length);
    for (const count of counts.values()) {
      expect(Math.abs(count - expected)).toBeLessThan(expected * 0.1);
    }
  });

  it.each(['', 'photo--editor', '-photo', 'photo-', 'photo editor', 'café', 'ıd', 'a_b'])(
    'refuses product code %p, which cannot form a valid serial',
    (code) => {
      expect(() => generateSerial(code)).toThrow(RangeError);
    },
  );
});

describe('SERIAL_PATTERN', () => {
  it.each(['LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC', 'LIC-X-0000000000000000', 'LIC-CAD3D-ZZZZZZZZZZZZZZZZ'])(
    'accepts %p',
    (serial) => {
      expect(serial).toMatch(SERIAL_PATTERN);
    },
  );

  it.each([
    ['lowercase', 'lic-photo-editor-7k3f9qx2m4w8t1zc'],
    ['a 15-symbol suffix', 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1Z'],
    ['a 17-symbol suffix', 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZCA'],
    ['an I in the suffix', 'LIC-PHOTO-EDITOR-IK3F9QX2M4W8T1ZC'],
    ['a U in the suffix', 'LIC-PHOTO-EDITOR-UK3F9QX2M4W8T1ZC'],
    ['no product code', 'LIC-7K3F9QX2M4W8T1ZC'],
    ['an empty code segment', 'LIC-PHOTO--EDITOR-7K3F9QX2M4W8T1ZC'],
    ['a wrong prefix', 'LIX-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC'],
    ['surrounding whitespace', ' LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC'],
  ])('rejects %s', (_label, value) => {
    expect(value).not.toMatch(SERIAL_PATTERN);
  });
});
