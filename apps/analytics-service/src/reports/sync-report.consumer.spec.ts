import { decodeSyncReport } from './sync-report.consumer';

const ORG = '6f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f';
const valid = {
  report_id: 'a0000000-0000-4000-8000-000000000001',
  org_id: ORG,
  license_id: 'b0000000-0000-4000-8000-000000000002',
  product_id: 'c0000000-0000-4000-8000-000000000003',
  serial: 'LIC-EDITOR-7K3F9QX2M4W8T1ZC',
  hardware_fingerprint: 'fp',
  app_version: '2.4.1',
  features_used: ['pro'],
  seats_in_use: 2,
  status: 'ok',
  received_at: '2026-03-01T10:05:00.123Z',
};
const bytes = (value: unknown): Uint8Array =>
  new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

describe('decodeSyncReport', () => {
  it('reads a well-formed report as it is', () => {
    expect(decodeSyncReport(bytes(valid), ORG)).toEqual({ report: valid });
  });

  it('counts a feature named twice in one report once, and reads absent optional fields as empty', () => {
    const { hardware_fingerprint: _f, app_version: _v, seats_in_use: _s, ...rest } = valid;
    expect(decodeSyncReport(bytes({ ...rest, features_used: ['pro', 'pro', 'sso'] }))).toEqual({
      report: {
        ...rest,
        hardware_fingerprint: null,
        app_version: null,
        seats_in_use: null,
        features_used: ['pro', 'sso'],
      },
    });
  });

  it.each([
    ['not JSON', 'not json'],
    ['an array', [valid]],
    ['a bad uuid', { ...valid, license_id: 'nope' }],
    ['an over-long serial', { ...valid, serial: 'x'.repeat(201) }],
    ['a NUL character, which PostgreSQL text cannot hold', { ...valid, app_version: 'a\u0000b' }],
    ['a lone surrogate, which PostgreSQL JSON cannot hold', { ...valid, hardware_fingerprint: 'm\udfff' }],
    ['a lone surrogate in a feature', { ...valid, features_used: ['\ud800'] }],
    ['negative seats', { ...valid, seats_in_use: -1 }],
    ['fractional seats', { ...valid, seats_in_use: 1.5 }],
    ['features that are not strings', { ...valid, features_used: [1] }],
    ['a missing status', { ...valid, status: undefined }],
    ['a received_at that is not a date', { ...valid, received_at: 'yesterday' }],
  ])('refuses %s', (_what, value) => {
    expect(decodeSyncReport(bytes(value), ORG)).toEqual({ problem: expect.any(String) });
  });

  it("refuses a report filed under another organization's subject", () => {
    expect(decodeSyncReport(bytes(valid), 'd0000000-0000-4000-8000-000000000004')).toEqual({
      problem: 'org_id is not the organization of the subject',
    });
  });
});
