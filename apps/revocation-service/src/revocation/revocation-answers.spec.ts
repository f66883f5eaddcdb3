import { randomUUID } from 'node:crypto';
import { SerialStatus, SyncReportDto } from '@licensing/contracts';
import { CredentialReach } from '@licensing/shared/logging';
import { scopedReportId } from './report-ids';
import {
  ownEntry,
  reachableEntry,
  revocationResults,
  statusAt,
  syncAnswer,
  syncRecord,
} from './revocation-answers';

const ORG = randomUUID();
const NOW = new Date('2030-06-01T12:00:00.000Z');

const entry = (overrides: Partial<SerialStatus> = {}): SerialStatus => ({
  serial: 'LIC-PHOTO-0001',
  org_id: ORG,
  license_id: randomUUID(),
  product_id: randomUUID(),
  status: 'active',
  revoked_at: null,
  valid_until: null,
  max_seats: 5,
  version: 1,
  ...overrides,
});

const organization: CredentialReach = { kind: 'organization', admin: false };

describe('statusAt', () => {
  it('answers an active license past its end as expired, at its end already', () => {
    expect(statusAt(entry({ valid_until: '2030-06-01T11:59:59.999Z' }), NOW)).toBe('expired');
    expect(statusAt(entry({ valid_until: NOW.toISOString() }), NOW)).toBe('expired');
    expect(statusAt(entry({ valid_until: '2030-06-01T12:00:00.001Z' }), NOW)).toBe('active');
    expect(statusAt(entry({ valid_until: null }), NOW)).toBe('active');
  });

  it('keeps a suspended or revoked status whatever the end date', () => {
    const past = '2020-01-01T00:00:00.000Z';
    expect(statusAt(entry({ status: 'suspended', valid_until: past }), NOW)).toBe('suspended');
    expect(statusAt(entry({ status: 'revoked', valid_until: past }), NOW)).toBe('revoked');
  });
});

describe('ownEntry', () => {
  it("treats another organization's serial as unknown", () => {
    const own = entry();
    expect(ownEntry(own, ORG)).toBe(own);
    expect(ownEntry(entry({ org_id: randomUUID() }), ORG)).toBeUndefined();
    expect(ownEntry(undefined, ORG)).toBeUndefined();
  });
});

describe('reachableEntry', () => {
  const found = entry();
  const license: CredentialReach = { kind: 'license', license_id: found.license_id };
  const machine: CredentialReach = {
    kind: 'machine',
    license_id: found.license_id,
    activation_id: randomUUID(),
    fingerprint: 'fp-1',
  };

  it('lets an organization key reach every serial of its organization', () => {
    expect(reachableEntry(found, {}, organization)).toBe(found);
  });

  it('lets a license token reach its own license only', () => {
    expect(reachableEntry(found, {}, license)).toBe(found);
    expect(reachableEntry(found, {}, { kind: 'license', license_id: randomUUID() })).toBeUndefined();
  });

  it('lets a machine token report for its own machine, named or not, and no other', () => {
    expect(reachableEntry(found, {}, machine)).toBe(found);
    expect(reachableEntry(found, { hardware_fingerprint: 'fp-1' }, machine)).toBe(found);
    expect(reachableEntry(found, { hardware_fingerprint: 'fp-2' }, machine)).toBeUndefined();
    expect(reachableEntry(found, {}, { ...machine, license_id: randomUUID() })).toBeUndefined();
  });
});

describe('revocationResults', () => {
  it('answers each serial in order, with not_found for unknown and foreign ones', () => {
    const revoked = entry({ serial: 'A', status: 'revoked', revoked_at: '2030-05-01T00:00:00.000Z' });
    const lapsed = entry({ serial: 'B', valid_until: '2030-01-01T00:00:00.000Z' });
    const foreign = entry({ serial: 'C', org_id: randomUUID(), status: 'revoked' });
    const found = new Map([revoked, lapsed, foreign].map((e) => [e.serial, e]));
    expect(revocationResults(['B', 'X', 'A', 'C'], found, ORG, NOW)).toEqual([
      { serial: 'B', status: 'expired', revoked_at: null },
      { serial: 'X', status: 'not_found', revoked_at: null },
      { serial: 'A', status: 'revoked', revoked_at: '2030-05-01T00:00:00.000Z' },
      { serial: 'C', status: 'not_found', revoked_at: null },
    ]);
  });
});

describe('syncAnswer', () => {
  it('answers ok for an active license and the status itself otherwise', () => {
    expect(syncAnswer(entry(), null, NOW)).toEqual({ status: 'ok', message: 'License is valid' });
    expect(syncAnswer(entry({ status: 'revoked' }), null, NOW).status).toBe('revoked');
    expect(syncAnswer(entry({ valid_until: '2030-01-01T00:00:00.000Z' }), null, NOW).status).toBe('expired');
    expect(syncAnswer(undefined, 3, NOW)).toEqual({ status: 'not_found', message: 'License not found' });
  });

  it('says when more seats are in use than the license allows, without changing the status', () => {
    expect(syncAnswer(entry({ max_seats: 5 }), 5, NOW).message).toBe('License is valid');
    expect(syncAnswer(entry({ max_seats: 5 }), 7, NOW)).toEqual({
      status: 'ok',
      message: 'License is valid; 7 seats in use exceeds the 5 allowed',
    });
  });
});

describe('syncRecord', () => {
  const found = entry();
  const dto: SyncReportDto = { license_serial: found.serial };

  it("stores the client's report_id scoped to its organization, so a retry is stored once", () => {
    const reportId = randomUUID();
    const record = syncRecord(
      ORG,
      found,
      { ...dto, report_id: reportId },
      organization,
      'ok',
      NOW.toISOString(),
    );
    expect(record.report_id).toBe(scopedReportId(ORG, reportId));
  });

  it('fills what the report left out with nulls, and a machine token with its own fingerprint', () => {
    const record = syncRecord(ORG, found, dto, organization, 'ok', NOW.toISOString());
    expect(record).toEqual({
      report_id: expect.any(String),
      org_id: ORG,
      license_id: found.license_id,
      product_id: found.product_id,
      serial: found.serial,
      hardware_fingerprint: null,
      app_version: null,
      features_used: [],
      seats_in_use: null,
      status: 'ok',
      received_at: NOW.toISOString(),
    });
    const machine: CredentialReach = {
      kind: 'machine',
      license_id: found.license_id,
      activation_id: randomUUID(),
      fingerprint: 'fp-1',
    };
    expect(syncRecord(ORG, found, dto, machine, 'ok', NOW.toISOString()).hardware_fingerprint).toBe('fp-1');
  });

  it('gives reports without a report_id time-ordered ids', () => {
    const first = syncRecord(ORG, found, dto, organization, 'ok', NOW.toISOString()).report_id;
    const second = syncRecord(ORG, found, dto, organization, 'ok', NOW.toISOString()).report_id;
    expect(first < second).toBe(true);
  });
});
