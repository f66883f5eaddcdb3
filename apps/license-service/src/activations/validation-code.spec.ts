import { ValidationCode } from '@licensing/contracts';
import { PolicyLimits, ValidationRequest, activationCode, licenseVerdict } from './validation-code';

const NOW = new Date('2026-06-01T12:00:00Z');
const LATER = new Date('2026-07-01T00:00:00Z');
const EARLIER = new Date('2026-05-01T00:00:00Z');

type License = Parameters<typeof licenseVerdict>[0];
type Activation = NonNullable<Parameters<typeof activationCode>[2]>;

const license = (overrides: Partial<License> = {}): License => ({
  status: 'active',
  validUntil: LATER,
  hardwareBinding: null,
  createdAt: EARLIER,
  lastCheckInAt: null,
  maxSeats: 2,
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
  policy: PolicyLimits | null = null,
  held: string[] = [],
): ValidationCode {
  if (!found) return 'NOT_FOUND';
  const withHeld = { ...found, entitlements: held };
  const verdict = licenseVerdict(withHeld, policy, request, NOW);
  if ('code' in verdict) return verdict.code;
  return activationCode(withHeld, policy, activations[verdict.activationOf] ?? null, request, NOW);
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
    expect(licenseVerdict(license({ hardwareBinding: { fingerprint: 'x' } }), null, {}, NOW)).toEqual({
      code: 'VALID',
    });
    expect(validate(license({ validUntil: null }), {})).toBe('VALID');
  });

  it('FINGERPRINT_MISMATCH for a machine other than the bound one, before its activation is read', () => {
    const bound = license({ hardwareBinding: { fingerprint: 'm2' } });
    expect(licenseVerdict(bound, null, machine, NOW)).toEqual({ code: 'FINGERPRINT_MISMATCH' });
    expect(validate(bound, everythingWrong.request, everythingWrong.activations)).toBe(
      'FINGERPRINT_MISMATCH',
    );
  });

  it('reads the activation of the bound machine, or of any machine when the license is not bound', () => {
    expect(licenseVerdict(license({ hardwareBinding: { fingerprint: 'm1' } }), null, machine, NOW)).toEqual({
      activationOf: 'm1',
    });
    expect(licenseVerdict(license(), null, machine, NOW)).toEqual({ activationOf: 'm1' });
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
    expect(validate(license({ status: 'suspended' }), request, { m1: activation() }, null, held)).toBe(
      'SUSPENDED',
    );
    expect(validate(license(), request, {}, null, held)).toBe('NO_ACTIVATION');
    expect(validate(license(), request, { m1: activation() }, null, held)).toBe('COMPONENTS_MISMATCH');
  });

  it('when the request names an entitlement the license lacks, with or without a machine', () => {
    expect(validate(license(), { entitlements: ['sso'] }, {}, null, held)).toBe('ENTITLEMENTS_MISSING');
    expect(validate(license(), { entitlements: ['export.pdf', 'sso'] }, {}, null, held)).toBe(
      'ENTITLEMENTS_MISSING',
    );
    expect(
      validate(license(), { fingerprint: 'm1', entitlements: ['sso'] }, { m1: activation() }, null, held),
    ).toBe('ENTITLEMENTS_MISSING');
  });

  it('VALID when the license holds every one named, or none is named', () => {
    expect(validate(license(), { entitlements: ['export.pdf'] }, {}, null, held)).toBe('VALID');
    expect(validate(license(), { entitlements: [] }, {}, null, [])).toBe('VALID');
    expect(validate(license(), {}, {}, null, [])).toBe('VALID');
  });

  it('comes before OVERAGE', () => {
    const overused = { checkInIntervalDays: null, machineMatching: 'all' as const, machinesInUse: 3 };
    expect(validate(license(), { entitlements: ['sso'] }, {}, overused, held)).toBe('ENTITLEMENTS_MISSING');
    expect(validate(license(), { entitlements: ['export.pdf'] }, {}, overused, held)).toBe('OVERAGE');
  });
});

describe('validate-by-key codes of a license with a policy', () => {
  const policy = (overrides: Partial<PolicyLimits> = {}): PolicyLimits => ({
    checkInIntervalDays: null,
    machineMatching: 'all',
    machinesInUse: 1,
    ...overrides,
  });
  const overdue = policy({ checkInIntervalDays: 7 });
  const overused = policy({ machinesInUse: 3 });
  const machine = { fingerprint: 'm1' };
  const live = { m1: activation() };

  it('OVERDUE after EXPIRED, before every machine check and before OVERAGE', () => {
    expect(validate(license({ status: 'suspended' }), machine, live, overdue)).toBe('SUSPENDED');
    expect(validate(license({ validUntil: EARLIER }), machine, live, overdue)).toBe('EXPIRED');
    const everythingWrong = policy({ checkInIntervalDays: 7, machinesInUse: 9 });
    const bound = license({ hardwareBinding: { fingerprint: 'other' } });
    expect(validate(bound, machine, {}, everythingWrong)).toBe('OVERDUE');
    expect(validate(license(), {}, {}, everythingWrong)).toBe('OVERDUE');
  });

  it('counts the check-in interval from the last check-in, or from the creation before the first', () => {
    const checkedIn = license({ lastCheckInAt: new Date(NOW.getTime() - 86_400_000) });
    expect(validate(checkedIn, {}, {}, overdue)).toBe('VALID');
    expect(validate(license({ createdAt: new Date(NOW.getTime() - 3_600_000) }), {}, {}, overdue)).toBe(
      'VALID',
    );
    expect(validate(license(), {}, {}, overdue)).toBe('OVERDUE');
  });

  it('OVERAGE (after every machine check) when more machines hold seats than max_seats', () => {
    expect(validate(license(), {}, {}, overused)).toBe('OVERAGE');
    expect(validate(license(), machine, live, overused)).toBe('OVERAGE');
    expect(validate(license(), machine, {}, overused)).toBe('NO_ACTIVATION');
    expect(validate(license(), machine, { m1: activation({ expiresAt: NOW }) }, overused)).toBe(
      'HEARTBEAT_DEAD',
    );
    const changed = { fingerprint: 'm1', components: { disk: 'other', cpu: 'other' } };
    expect(validate(license(), changed, live, overused)).toBe('COMPONENTS_MISMATCH');
    expect(validate(license({ maxSeats: 3 }), machine, live, overused)).toBe('VALID');
  });

  it('never OVERAGE for a license without a policy, even above its seats', () => {
    expect(validate(license({ maxSeats: 1 }), machine, live, null)).toBe('VALID');
  });

  it("compares components by the policy's matching rule", () => {
    const recorded = { m1: activation({ components: { disk: 'd1', cpu: 'c1', gpu: 'g1' } }) };
    const giving = (components: Record<string, string>, rule: PolicyLimits['machineMatching']) =>
      validate(license(), { fingerprint: 'm1', components }, recorded, policy({ machineMatching: rule }));
    expect(giving({ disk: 'd1', cpu: 'x', gpu: 'x' }, 'any')).toBe('VALID');
    expect(giving({ disk: 'x', cpu: 'x', gpu: 'x' }, 'any')).toBe('COMPONENTS_MISMATCH');
    expect(giving({ disk: 'd1', cpu: 'c1', gpu: 'x' }, 'two')).toBe('VALID');
    expect(giving({ disk: 'd1', cpu: 'x', gpu: 'x' }, 'two')).toBe('COMPONENTS_MISMATCH');
    expect(giving({ disk: 'd1', cpu: 'c1' }, 'most')).toBe('VALID');
    expect(giving({ disk: 'd1' }, 'most')).toBe('COMPONENTS_MISMATCH');
    expect(giving({ disk: 'd1', cpu: 'c1', gpu: 'g1', extra: 'e' }, 'all')).toBe('VALID');
    expect(giving({ disk: 'd1', cpu: 'c1' }, 'all')).toBe('COMPONENTS_MISMATCH');
  });
});
