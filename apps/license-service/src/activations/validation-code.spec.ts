import { ValidationCode } from '@licensing/contracts';
import { ValidationRequest, activationCode, entitlementsCode, licenseVerdict } from './validation-code';

const NOW = new Date('2026-06-01T12:00:00Z');
const LATER = new Date('2026-07-01T00:00:00Z');
const EARLIER = new Date('2026-05-01T00:00:00Z');

type License = Parameters<typeof licenseVerdict>[0];
type Activation = NonNullable<Parameters<typeof activationCode>[0]>;

const license = (overrides: Partial<License> = {}): License => ({
  status: 'active',
  validUntil: LATER,
  hardwareBinding: null,
  ...overrides,
});
const activation = (overrides: Partial<Activation> = {}): Activation => ({
  expiresAt: LATER,
  components: { disk: 'd1', cpu: 'c1' },
  ...overrides,
});

/**
 * What LicenseValidator answers: no license is NOT_FOUND, then the license's verdict, then (only
 * when the license asks for it) the activation of that machine, which `activations` holds, then
 * the entitlements the license holds (`held`).
 */
function validate(
  found: License | null,
  request: ValidationRequest,
  activations: Record<string, Activation> = {},
  held: string[] = [],
): ValidationCode {
  if (!found) return 'NOT_FOUND';
  const verdict = licenseVerdict(found, request, NOW);
  if ('code' in verdict) return verdict.code === 'VALID' ? entitlementsCode(held, request) : verdict.code;
  const code = activationCode(activations[verdict.activationOf] ?? null, request, NOW);
  return code === 'VALID' ? entitlementsCode(held, request) : code;
}

describe('validate-by-key codes, in order', () => {
  const machine = { fingerprint: 'm1' };
  const everythingWrong = {
    activations: { m1: activation({ expiresAt: EARLIER, components: { disk: 'other' } }) },
    request: { fingerprint: 'm1', components: { disk: 'd1' } },
  };

  it('NOT_FOUND when no license has the key, whatever else the request says', () => {
    expect(validate(null, everythingWrong.request)).toBe('NOT_FOUND');
  });

  it('REVOKED before SUSPENDED, EXPIRED and every machine check', () => {
    const revoked = license({
      status: 'revoked',
      validUntil: EARLIER,
      hardwareBinding: { fingerprint: 'x' },
    });
    expect(validate(revoked, everythingWrong.request, everythingWrong.activations)).toBe('REVOKED');
  });

  it('SUSPENDED before EXPIRED and every machine check', () => {
    const suspended = license({
      status: 'suspended',
      validUntil: EARLIER,
      hardwareBinding: { fingerprint: 'x' },
    });
    expect(validate(suspended, everythingWrong.request, everythingWrong.activations)).toBe('SUSPENDED');
  });

  it('EXPIRED for a stored expired license and for an active one past its valid_until', () => {
    expect(validate(license({ status: 'expired', validUntil: EARLIER }), machine)).toBe('EXPIRED');
    expect(validate(license({ validUntil: EARLIER, hardwareBinding: { fingerprint: 'x' } }), machine)).toBe(
      'EXPIRED',
    );
    expect(validate(license({ validUntil: NOW }), {})).toBe('EXPIRED');
  });

  it('VALID without a fingerprint, and without reading any activation', () => {
    expect(licenseVerdict(license({ hardwareBinding: { fingerprint: 'x' } }), {}, NOW)).toEqual({
      code: 'VALID',
    });
    expect(validate(license({ validUntil: null }), {})).toBe('VALID');
  });

  it('FINGERPRINT_MISMATCH for a machine other than the bound one, before its activation is read', () => {
    const bound = license({ hardwareBinding: { fingerprint: 'm2' } });
    expect(licenseVerdict(bound, machine, NOW)).toEqual({ code: 'FINGERPRINT_MISMATCH' });
    expect(validate(bound, everythingWrong.request, everythingWrong.activations)).toBe(
      'FINGERPRINT_MISMATCH',
    );
  });

  it('reads the activation of the bound machine, or of any machine when the license is not bound', () => {
    expect(licenseVerdict(license({ hardwareBinding: { fingerprint: 'm1' } }), machine, NOW)).toEqual({
      activationOf: 'm1',
    });
    expect(licenseVerdict(license(), machine, NOW)).toEqual({ activationOf: 'm1' });
  });

  it('NO_ACTIVATION when that machine has not activated', () => {
    expect(validate(license(), machine, { m2: activation() })).toBe('NO_ACTIVATION');
  });

  it('HEARTBEAT_DEAD when its activation is past its deadline, before the components are compared', () => {
    expect(validate(license(), everythingWrong.request, everythingWrong.activations)).toBe('HEARTBEAT_DEAD');
    expect(validate(license(), machine, { m1: activation({ expiresAt: NOW }) })).toBe('HEARTBEAT_DEAD');
  });

  it('COMPONENTS_MISMATCH when a component the request names differs from the recorded one', () => {
    expect(
      validate(license(), { fingerprint: 'm1', components: { disk: 'other' } }, { m1: activation() }),
    ).toBe('COMPONENTS_MISMATCH');
    expect(validate(license(), { fingerprint: 'm1', components: { gpu: 'g1' } }, { m1: activation() })).toBe(
      'COMPONENTS_MISMATCH',
    );
  });

  it('VALID for a live activation whose named components match; components not named are not compared', () => {
    expect(validate(license(), machine, { m1: activation() })).toBe('VALID');
    expect(validate(license(), { fingerprint: 'm1', components: { disk: 'd1' } }, { m1: activation() })).toBe(
      'VALID',
    );
    expect(validate(license(), machine, { m1: activation({ expiresAt: null }) })).toBe('VALID');
  });
});

describe('ENTITLEMENTS_MISSING', () => {
  const held = ['cloud-sync', 'export.pdf'];

  it('comes after every license and machine check', () => {
    const request = { fingerprint: 'm1', components: { disk: 'other' }, entitlements: ['sso'] };
    expect(validate(license({ status: 'suspended' }), request, { m1: activation() }, held)).toBe('SUSPENDED');
    expect(validate(license(), request, {}, held)).toBe('NO_ACTIVATION');
    expect(validate(license(), request, { m1: activation() }, held)).toBe('COMPONENTS_MISMATCH');
  });

  it('when the request names an entitlement the license lacks, with or without a machine', () => {
    expect(validate(license(), { entitlements: ['sso'] }, {}, held)).toBe('ENTITLEMENTS_MISSING');
    expect(validate(license(), { entitlements: ['export.pdf', 'sso'] }, {}, held)).toBe(
      'ENTITLEMENTS_MISSING',
    );
    expect(
      validate(license(), { fingerprint: 'm1', entitlements: ['sso'] }, { m1: activation() }, held),
    ).toBe('ENTITLEMENTS_MISSING');
  });

  it('VALID when the license holds every one named, or none is named', () => {
    expect(validate(license(), { entitlements: ['export.pdf'] }, {}, held)).toBe('VALID');
    expect(validate(license(), { entitlements: [] }, {}, [])).toBe('VALID');
    expect(validate(license(), {}, {}, [])).toBe('VALID');
  });
});
