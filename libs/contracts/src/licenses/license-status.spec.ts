import { effectiveStatus } from './license-status';

describe('effectiveStatus', () => {
  const now = new Date('2026-11-22T12:00:00.000Z');

  it('reports an active license past valid_until as expired', () => {
    expect(effectiveStatus({ status: 'active', validUntil: new Date('2026-11-22T11:59:59.999Z') }, now)).toBe(
      'expired',
    );
    expect(effectiveStatus({ status: 'active', validUntil: now }, now)).toBe('expired');
  });

  it('keeps active licenses that are perpetual or still valid', () => {
    expect(effectiveStatus({ status: 'active', validUntil: null }, now)).toBe('active');
    expect(effectiveStatus({ status: 'active', validUntil: new Date('2026-11-22T12:00:00.001Z') }, now)).toBe(
      'active',
    );
  });

  it('never turns revoked or suspended into expired', () => {
    const past = new Date('2020-01-01T00:00:00.000Z');
    expect(effectiveStatus({ status: 'revoked', validUntil: past }, now)).toBe('revoked');
    expect(effectiveStatus({ status: 'suspended', validUntil: past }, now)).toBe('suspended');
  });
});
