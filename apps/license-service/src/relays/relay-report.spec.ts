import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { v5 } from 'uuid';
import { DomainError } from '@licensing/shared/errors';
import { LicenseEntity } from '../licenses/license.entity';
import { RelayFileEntity } from './relay-file.entity';
import { decodeReport, leaseRecords, leaseReportId, readRelayReport } from './relay-report';

const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const { privateKey } = generateKeyPairSync('ed25519');
const jws = (header: Record<string, unknown>, payload: unknown = { v: 1 }) => {
  const input = `${segment(header)}.${segment(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`;
};
const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof DomainError ? error.code : String(error);
  }
};

const file = Object.assign(new RelayFileEntity(), { id: randomUUID(), orgId: randomUUID() });
const license = Object.assign(new LicenseEntity(), {
  id: randomUUID(),
  productId: randomUUID(),
  serial: 'LIC-CAD-7K3F9QX2M4W8T1ZC',
  status: 'active',
  validUntil: null,
});
const lease = (leasedAt: string, id = randomUUID()) => ({
  id,
  fingerprint: 'machine-a',
  leased_at: leasedAt,
  ended_at: null,
  seats_in_use: 2,
});

describe('relay report ids', () => {
  it("are the UUID v5 of the lease id in the relay file id's namespace, whatever the case", () => {
    const leaseId = randomUUID();
    expect(leaseReportId(file.id, leaseId)).toBe(v5(leaseId, file.id));
    expect(leaseReportId(file.id.toUpperCase(), leaseId.toUpperCase())).toBe(v5(leaseId, file.id));
    expect(leaseReportId(randomUUID(), leaseId)).not.toBe(v5(leaseId, file.id));
  });
});

describe('decodeReport', () => {
  it('reads an EdDSA relay report whose kid is a relay file id', () => {
    const decoded = decodeReport(jws({ alg: 'EdDSA', typ: 'relay-report+jws', kid: file.id.toUpperCase() }));
    expect(decoded.header.kid).toBe(file.id);
  });

  it.each([
    ['not a JWS', 'nope'],
    ['another typ', jws({ alg: 'EdDSA', typ: 'license+jwt', kid: file.id })],
    ['no typ', jws({ alg: 'EdDSA', kid: file.id })],
    ['a kid that is not a UUID', jws({ alg: 'EdDSA', typ: 'relay-report+jws', kid: 'relay-1' })],
    ['no kid', jws({ alg: 'EdDSA', typ: 'relay-report+jws' })],
  ])('refuses %s with report_signature_invalid', (_what, report) => {
    expect(codeOf(() => decodeReport(report))).toBe('report_signature_invalid');
  });
});

describe('leaseRecords', () => {
  const now = new Date('2026-11-27T12:00:00.000Z');

  it('makes one record per distinct lease, received at leased_at, with the license status as a sync has it', () => {
    const first = lease('2026-11-27T08:00:00.000Z');
    const records = leaseRecords(file, license, [first, lease('2026-11-26T08:00:00Z'), { ...first }], now);
    expect(records).toHaveLength(2);
    expect(records[0]).toEqual({
      report_id: v5(first.id, file.id),
      org_id: file.orgId,
      license_id: license.id,
      product_id: license.productId,
      serial: license.serial,
      hardware_fingerprint: 'machine-a',
      app_version: null,
      features_used: [],
      seats_in_use: 2,
      status: 'ok',
      received_at: '2026-11-27T08:00:00.000Z',
    });
    expect(records[1]!.received_at).toBe('2026-11-26T08:00:00.000Z');
    const suspended = Object.assign(new LicenseEntity(), { ...license, status: 'suspended' });
    expect(leaseRecords(file, suspended, [first], now)[0]!.status).toBe('suspended');
  });

  it('places a lease dated after now at now', () => {
    expect(leaseRecords(file, license, [lease('2027-01-01T00:00:00.000Z')], now)[0]!.received_at).toBe(
      now.toISOString(),
    );
  });
});

describe('a relay report payload', () => {
  const payload = {
    v: 1,
    kind: 'relay_report',
    report_id: randomUUID(),
    relay_file_id: file.id,
    site: 'plant-7',
    serial: license.serial,
    product_id: license.productId,
    created_at: '2026-11-27T12:00:00.000Z',
    leases: [lease('2026-11-27T08:00:00.000Z')],
  };

  it('is read with members it does not know, in the report and in its leases', () => {
    const read = readRelayReport({
      ...payload,
      relay_version: '1.0.0',
      leases: [{ ...payload.leases[0], name: 'ada-laptop', ended_at: '2026-11-27T09:00:00.000Z' }],
    });
    expect(read.leases).toHaveLength(1);
  });

  it.each([
    ['another version', { v: 2 }],
    ['another kind', { kind: 'relay_request' }],
    ['a lease without an id', { leases: [{ ...payload.leases[0], id: undefined }] }],
    ['a lease with a bad leased_at', { leases: [{ ...payload.leases[0], leased_at: 'yesterday' }] }],
    ['negative seats', { leases: [{ ...payload.leases[0], seats_in_use: -1 }] }],
    ['a NUL in a fingerprint', { leases: [{ ...payload.leases[0], fingerprint: 'a\u0000b' }] }],
    ['leases that are not a list', { leases: {} }],
    ['a lease that is not an object', { leases: ['lease'] }],
    ['more than 10,000 leases', { leases: Array.from({ length: 10_001 }, () => payload.leases[0]) }],
  ])('is refused with %s', (_what, change) => {
    expect(codeOf(() => readRelayReport({ ...payload, ...change }))).toBe('report_signature_invalid');
  });
});
