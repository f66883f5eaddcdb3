import {
  buildCheckoutClaims,
  buildClaims,
  fileExpiryOf,
  LICENSE_TYPES,
  readLicenseClaims,
  timeProblems,
  type BuildClaimsInput,
} from './claims';

const validFrom = new Date('2026-11-22T08:00:00.750Z');
const validUntil = new Date('2027-11-22T08:00:00.250Z');
const issuedAt = new Date('2026-11-22T09:30:15.999Z');

function input(overrides: Partial<BuildClaimsInput> = {}): BuildClaimsInput {
  return {
    licenseId: '4b0c5d0e-8a43-4a8b-9d0b-2f8f3c1e6a11',
    serial: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC',
    orgId: '0d8f2c64-3f55-4b7e-a0d4-6d7b8a9c0e12',
    productId: '9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d',
    productCode: 'photo-editor',
    licenseType: 'subscription',
    customerId: 'cust-42',
    customerEmail: 'ada@example.com',
    features: ['pro'],
    maxSeats: 3,
    hardwareBinding: null,
    validFrom,
    validUntil,
    issuedAt,
    ...overrides,
  };
}

describe('buildClaims', () => {
  it('maps the input onto the documented claim names, with times as whole Unix seconds rounded down', () => {
    expect(buildClaims(input())).toEqual({
      v: 1,
      jti: '4b0c5d0e-8a43-4a8b-9d0b-2f8f3c1e6a11',
      sub: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC',
      iss: '0d8f2c64-3f55-4b7e-a0d4-6d7b8a9c0e12',
      iat: Math.floor(issuedAt.getTime() / 1000),
      nbf: Math.floor(validFrom.getTime() / 1000),
      exp: Math.floor(validUntil.getTime() / 1000),
      product_id: '9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d',
      product_code: 'photo-editor',
      license_type: 'subscription',
      customer_id: 'cust-42',
      customer_email: 'ada@example.com',
      features: ['pro'],
      max_seats: 3,
      hardware_binding: null,
      valid_from: '2026-11-22T08:00:00.750Z',
      valid_until: '2027-11-22T08:00:00.250Z',
    });
  });

  it('rounds down rather than to nearest, so nbf never lands after valid_from', () => {
    const claims = buildClaims(input());
    expect(claims.nbf).toBe(1795334400);
    expect(claims.iat).toBe(1795339815);
  });

  it('leaves exp out entirely for a license without valid_until', () => {
    const claims = buildClaims(input({ licenseType: 'perpetual', validUntil: null }));
    expect('exp' in claims).toBe(false);
    expect(JSON.stringify(claims)).not.toContain('"exp"');
    expect(claims.valid_until).toBeNull();
  });

  it('copies features and hardware binding so later edits by the caller do not change the claims', () => {
    const features = ['pro'];
    const hardwareBinding = { fingerprint: 'hw-1' };
    const claims = buildClaims(input({ features, hardwareBinding, licenseType: 'node_locked' }));
    features.push('enterprise');
    hardwareBinding.fingerprint = 'hw-2';
    expect(claims.features).toEqual(['pro']);
    expect(claims.hardware_binding).toEqual({ fingerprint: 'hw-1' });
  });

  it('adds entitlements last, only when there are some, as a copy', () => {
    expect(buildClaims(input())).not.toHaveProperty('entitlements');
    expect(buildClaims(input({ entitlements: [] }))).not.toHaveProperty('entitlements');
    const codes = ['cloud-sync', 'export.pdf'];
    const claims = buildClaims(input({ entitlements: codes }));
    codes.push('later');
    expect(claims.entitlements).toEqual(['cloud-sync', 'export.pdf']);
    expect(Object.keys(claims).at(-1)).toBe('entitlements');
    expect(readLicenseClaims(JSON.parse(JSON.stringify(claims)))).toEqual(claims);
  });

  it('reads a payload whose entitlements are not a list of strings as no license', () => {
    for (const entitlements of ['pdf', [1], null, {}]) {
      expect(readLicenseClaims({ ...buildClaims(input()), entitlements })).toBeUndefined();
    }
  });

  it('refuses an invalid date instead of signing NaN', () => {
    expect(() => buildClaims(input({ validFrom: new Date('nope') }))).toThrow(RangeError);
    expect(() => buildClaims(input({ validUntil: new Date('nope') }))).toThrow(RangeError);
    expect(() => buildClaims(input({ issuedAt: new Date('nope') }))).toThrow(RangeError);
  });

  it('lists the five license types', () => {
    expect(LICENSE_TYPES).toEqual(['perpetual', 'subscription', 'trial', 'node_locked', 'floating']);
  });
});

describe('timeProblems', () => {
  const nbf = 1_800_000_000;
  const exp = 1_800_086_400;
  const at = (seconds: number): Date => new Date(seconds * 1000);

  it('reports nothing inside the validity window', () => {
    expect(timeProblems({ nbf, exp }, at(nbf + 60))).toEqual([]);
  });

  it('is valid from the nbf second itself, with no leeway before it', () => {
    expect(timeProblems({ nbf, exp }, at(nbf))).toEqual([]);
    expect(timeProblems({ nbf, exp }, new Date(nbf * 1000 - 1))).toEqual(['not_yet_valid']);
  });

  it('is expired from the exp second itself, with no leeway after it', () => {
    expect(timeProblems({ nbf, exp }, new Date(exp * 1000 - 1))).toEqual([]);
    expect(timeProblems({ nbf, exp }, at(exp))).toEqual(['expired']);
    expect(timeProblems({ nbf, exp }, at(exp + 3600))).toEqual(['expired']);
  });

  it('never reports a license without exp as expired', () => {
    expect(timeProblems({ nbf }, at(nbf + 100 * 365 * 86400))).toEqual([]);
  });

  it('reports both problems when exp is not after nbf', () => {
    expect(timeProblems({ nbf, exp: nbf - 10 }, at(nbf - 5))).toEqual(['not_yet_valid', 'expired']);
  });
});

describe('readLicenseClaims', () => {
  const valid = JSON.parse(JSON.stringify(buildClaims(input()))) as Record<string, unknown>;

  it('accepts the claims buildClaims produces, perpetual or not', () => {
    expect(readLicenseClaims(valid)).toEqual(valid);
    expect(
      readLicenseClaims(JSON.parse(JSON.stringify(buildClaims(input({ validUntil: null }))))),
    ).toBeDefined();
  });

  it.each([
    ['a non-object', ['x']],
    ['null', null],
    ['an unknown version', { ...valid, v: 2 }],
    ['a numeric serial', { ...valid, sub: 42 }],
    ['fractional times', { ...valid, nbf: 1.5 }],
    ['a null exp', { ...valid, exp: null }],
    ['an unknown license type', { ...valid, license_type: 'forever' }],
    ['features that are not strings', { ...valid, features: [1] }],
    ['a binding without a fingerprint', { ...valid, hardware_binding: {} }],
    ['a missing product id', { ...valid, product_id: undefined }],
  ])('rejects %s', (_name, payload) => {
    expect(readLicenseClaims(payload)).toBeUndefined();
  });
});

describe('buildCheckoutClaims', () => {
  const expiresAt = new Date('2026-12-22T09:30:15.999Z');

  it('signs now, with exp the file expiry, the license claims unchanged and no fingerprint or policy', () => {
    const claims = buildCheckoutClaims(input(), { expiresAt });
    const { exp: _exp, ...license } = buildClaims(input());
    expect(claims).toEqual({ ...license, exp: Math.floor(expiresAt.getTime() / 1000) });
    expect(Object.keys(claims).slice(0, 7)).toEqual(['v', 'jti', 'sub', 'iss', 'iat', 'nbf', 'exp']);
    expect(fileExpiryOf(claims)).toBe(claims.exp);
  });

  it("caps exp at the license's valid_until: the file is then an ordinary one", () => {
    const claims = buildCheckoutClaims(input(), { expiresAt: new Date('2030-01-01T00:00:00Z') });
    expect(claims.exp).toBe(Math.floor(validUntil.getTime() / 1000));
    expect(fileExpiryOf(claims)).toBeUndefined();
  });

  it('gives a perpetual license a file expiry', () => {
    const claims = buildCheckoutClaims(input({ validUntil: null }), { expiresAt });
    expect(claims.valid_until).toBeNull();
    expect(fileExpiryOf(claims)).toBe(Math.floor(expiresAt.getTime() / 1000));
  });

  it("carries an activation's fingerprint and the extra claims, which read back", () => {
    const policy = { id: 'p-1', max_machines: 3, max_uses: 50, uses_reset: 'month', overage: 'none' };
    const claims = buildCheckoutClaims(
      input({ entitlements: ['cloud-sync'] }),
      { expiresAt, fingerprint: 'machine-a' },
      { policy },
    );
    expect(claims).toMatchObject({ entitlements: ['cloud-sync'], fingerprint: 'machine-a', policy });
    expect(readLicenseClaims(JSON.parse(JSON.stringify(claims)))).toEqual(claims);
  });

  it("puts a relay file's relay claim last, and reads the file back as a license", () => {
    const relay = {
      id: 'r-1',
      site: 'plant 7',
      public_key: '-----BEGIN PUBLIC KEY-----\nMCow\n-----END PUBLIC KEY-----\n',
    };
    const policy = { id: 'p-1', max_machines: 3 };
    const claims = buildCheckoutClaims(input(), { expiresAt }, { relay, policy });
    expect(Object.keys(claims).slice(-2)).toEqual(['policy', 'relay']);
    expect(claims.relay).toEqual(relay);
    expect(readLicenseClaims(JSON.parse(JSON.stringify(claims)))).toEqual(claims);
  });

  it.each([
    ['a fingerprint that is not a string', { fingerprint: 7 }],
    ['a policy that is not an object', { policy: ['max_machines'] }],
    ['a policy limit of the wrong type', { policy: { max_machines: '3' } }],
    ['a uses_reset that is not a string', { policy: { uses_reset: 1 } }],
  ])('is not read back with %s', (_name, extra) => {
    expect(readLicenseClaims({ ...buildClaims(input()), ...extra })).toBeUndefined();
  });
});

describe('timeProblems of a checkout file', () => {
  const nbf = 1_800_000_000;
  const exp = 1_800_086_400;
  const validUntil = new Date((exp + 30 * 86_400) * 1000).toISOString();
  const at = (seconds: number): Date => new Date(seconds * 1000);

  it('reports file_expired, not expired, from exp on, while the license is still valid', () => {
    expect(timeProblems({ nbf, exp, valid_until: validUntil }, new Date(exp * 1000 - 1))).toEqual([]);
    expect(timeProblems({ nbf, exp, valid_until: validUntil }, at(exp))).toEqual(['file_expired']);
  });

  it('reports both once the license itself has ended', () => {
    expect(timeProblems({ nbf, exp, valid_until: validUntil }, at(exp + 31 * 86_400))).toEqual([
      'expired',
      'file_expired',
    ]);
  });

  it('reports file_expired for a perpetual license past exp', () => {
    expect(timeProblems({ nbf, exp, valid_until: null }, at(exp))).toEqual(['file_expired']);
  });

  it('keeps an ordinary file (exp = valid_until) as before: expired only', () => {
    const ordinary = { nbf, exp, valid_until: new Date(exp * 1000 + 250).toISOString() };
    expect(timeProblems(ordinary, at(exp))).toEqual(['expired']);
    expect(timeProblems({ nbf, valid_until: null }, at(exp))).toEqual([]);
  });
});
