import { UpdateLicenseDto } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { applyChanges } from './license-changes';

const NOW = new Date('2026-06-01T12:00:00Z');
const DAY_MS = 86_400_000;
const daysFromNow = (days: number) => new Date(NOW.getTime() + days * DAY_MS);

type License = Parameters<typeof applyChanges>[0];

function license(overrides: Partial<License> = {}): License {
  return {
    id: 'f0e1d2c3-0000-4000-8000-000000000001',
    licenseType: 'subscription',
    customerId: 'cust-1',
    customerEmail: 'ada@example.com',
    features: ['pro'],
    hardwareBinding: null,
    maxSeats: 1,
    validFrom: daysFromNow(-10),
    validUntil: daysFromNow(20),
    status: 'active',
    maxUses: null,
    ...overrides,
  };
}

/** Applies a PATCH body and answers the license, or the DomainError it was refused with. */
function patch(target: License, changes: Partial<UpdateLicenseDto>): License | DomainError {
  try {
    applyChanges(target, changes as UpdateLicenseDto, NOW);
    return target;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
}

describe('license PATCH rules (applyChanges)', () => {
  it('changes only the fields the body names, and an empty body changes nothing', () => {
    const before = license();
    expect(patch(license(), {})).toEqual(before);
    expect(patch(license(), { features: ['pro', 'export'] })).toEqual({
      ...before,
      features: ['pro', 'export'],
    });
  });

  it('clears customer_id, customer_email and hardware_binding with null', () => {
    const changed = patch(license({ hardwareBinding: { fingerprint: 'm1' } }), {
      customer_id: null,
      customer_email: null,
      hardware_binding: null,
    });
    expect(changed).toMatchObject({ customerId: null, customerEmail: null, hardwareBinding: null });
  });

  it('binds to a machine by its fingerprint alone, dropping any other property of the body', () => {
    const changed = patch(license(), {
      hardware_binding: { fingerprint: 'm2', extra: 'ignored' } as UpdateLicenseDto['hardware_binding'],
    });
    expect(changed).toMatchObject({ hardwareBinding: { fingerprint: 'm2' } });
  });

  describe('max_seats', () => {
    it('sets the seats of a floating license', () => {
      expect(patch(license({ licenseType: 'floating' }), { max_seats: 25 })).toMatchObject({
        maxSeats: 25,
      });
    });

    it('refuses any seat count but one for a node_locked license, naming the field', () => {
      const refused = patch(license({ licenseType: 'node_locked' }), { max_seats: 2 });
      expect(refused).toBeInstanceOf(DomainError);
      expect(refused).toMatchObject({
        code: 'validation_failed',
        status: 400,
        errors: [{ field: 'max_seats', message: 'a node_locked license has exactly one seat' }],
      });
      expect(patch(license({ licenseType: 'node_locked' }), { max_seats: 1 })).toMatchObject({
        maxSeats: 1,
      });
    });
  });

  describe('valid_until', () => {
    it('refuses an end before the start, naming the field', () => {
      const refused = patch(license(), { valid_until: daysFromNow(-11).toISOString() });
      expect(refused).toMatchObject({
        code: 'validation_failed',
        errors: [{ field: 'valid_until', message: 'valid_until must not be before valid_from' }],
      });
    });

    it('accepts an end equal to the start', () => {
      const start = daysFromNow(-10);
      expect(patch(license({ validFrom: start }), { valid_until: start.toISOString() })).toMatchObject({
        validUntil: start,
      });
    });

    it('makes the license perpetual with null', () => {
      expect(patch(license(), { valid_until: null })).toMatchObject({ validUntil: null });
    });

    it('makes an expired license active again when the new end is in the future', () => {
      const extended = patch(license({ status: 'expired', validUntil: daysFromNow(-1) }), {
        valid_until: daysFromNow(30).toISOString(),
      });
      expect(extended).toMatchObject({ status: 'active', validUntil: daysFromNow(30) });
      expect(
        patch(license({ status: 'expired', validUntil: daysFromNow(-1) }), { valid_until: null }),
      ).toMatchObject({ status: 'active' });
    });

    it('leaves an expired license expired when the new end is still in the past', () => {
      const moved = patch(license({ status: 'expired', validUntil: daysFromNow(-1) }), {
        valid_until: daysFromNow(-2).toISOString(),
      });
      expect(moved).toMatchObject({ status: 'expired', validUntil: daysFromNow(-2) });
    });

    it('does not reinstate a suspended license by extending it', () => {
      const extended = patch(license({ status: 'suspended' }), {
        valid_until: daysFromNow(90).toISOString(),
      });
      expect(extended).toMatchObject({ status: 'suspended' });
    });
  });

  describe('status', () => {
    it('suspends an active license and reinstates a suspended one', () => {
      expect(patch(license(), { status: 'suspended' })).toMatchObject({ status: 'suspended' });
      expect(patch(license({ status: 'suspended' }), { status: 'active' })).toMatchObject({
        status: 'active',
      });
    });

    it('refuses to change the status of an expired license with 409', () => {
      const refused = patch(license({ status: 'expired', validUntil: daysFromNow(-1) }), {
        status: 'suspended',
      });
      expect(refused).toMatchObject({ code: 'conflict', status: 409 });
      expect((refused as DomainError).message).toMatch(/has expired; extend valid_until/);
    });

    it('judges by the effective status: an overdue license stored as active is expired', () => {
      const refused = patch(license({ status: 'active', validUntil: daysFromNow(-1) }), {
        status: 'suspended',
      });
      expect(refused).toMatchObject({ code: 'conflict' });
    });

    it('accepts a status change together with an extension that ends the expiry', () => {
      const changed = patch(license({ status: 'expired', validUntil: daysFromNow(-1) }), {
        valid_until: daysFromNow(10).toISOString(),
        status: 'suspended',
      });
      expect(changed).toMatchObject({ status: 'suspended', validUntil: daysFromNow(10) });
    });

    it('treats a license ending exactly now as expired', () => {
      const refused = patch(license({ validUntil: NOW }), { status: 'suspended' });
      expect(refused).toMatchObject({ code: 'conflict' });
    });
  });
});

describe('max_uses', () => {
  it('sets a limit, clears it with null, and may go below the uses counted', () => {
    expect(patch(license(), { max_uses: 50 })).toMatchObject({ maxUses: 50 });
    expect(patch(license({ maxUses: 50 }), { max_uses: null })).toMatchObject({ maxUses: null });
    expect(patch(license({ maxUses: 50 }), { max_uses: 0 })).toMatchObject({ maxUses: 0 });
  });
});
