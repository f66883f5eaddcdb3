import 'reflect-metadata';
import { ValidationPipe } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';
import fc from 'fast-check';
import * as contracts from '@licensing/contracts';
import { DomainError, VALIDATION_OPTIONS, compiledValidation } from '@licensing/shared/errors';

type Class = new () => object;

const ID = '0190b4a6-5a39-7d55-9d47-6bc7d35f7f53';
const OTHER = '5b0c2d1e-8f3a-4c6b-9d2e-1f0a3b4c5d6e';
const AT = '2026-11-25T10:00:00.000Z';
const status = {
  serial: 'BENCH-ABCD-EFGH',
  org_id: ID,
  license_id: OTHER,
  product_id: ID,
  status: 'active',
  revoked_at: null,
  valid_until: AT,
  max_seats: 1,
  version: 3,
};

/** The hot paths' requests, as the gateway and then the service receive them. */
const requests: Array<[string, Class, Record<string, unknown>]> = [
  ['CheckRevocationDto', contracts.CheckRevocationDto, { serials: ['BENCH-A', 'BENCH-B'] }],
  [
    'SyncReportDto',
    contracts.SyncReportDto,
    {
      license_serial: 'BENCH-A',
      hardware_fingerprint: 'fp',
      app_version: '1.2.3',
      features_used: ['export'],
      seats_in_use: 1,
      report_id: ID,
    },
  ],
  ['VerifyLicenseDto', contracts.VerifyLicenseDto, { license_blob: 'eyJ0', product_id: ID }],
  ['ValidateLicenseDto', contracts.ValidateLicenseDto, { key: 'BENCH-A', fingerprint: 'fp' }],
  [
    'CreateLicenseDto',
    contracts.CreateLicenseDto,
    {
      product_id: ID,
      license_type: 'subscription',
      customer_id: 'c-1',
      customer_email: 'ops@example.com',
      features: ['export'],
      valid_days: 30,
      max_seats: 2,
      hardware_binding: { fingerprint: 'fp' },
    },
  ],
];

/** The stream records every consumer decodes (`decodeMessage`): unknown members are allowed. */
const records: Array<[string, Class, Record<string, unknown>]> = [
  [
    'LicenseEventRecord',
    contracts.LicenseEventRecord,
    { id: ID, type: 'license.created', org_id: ID, occurred_at: AT, serial_status: status, data: {} },
  ],
  [
    'WebhookEventRecord',
    contracts.WebhookEventRecord,
    { id: ID, type: 'license.created', org_id: ID, occurred_at: AT, data: { id: OTHER } },
  ],
  [
    'AuditEntryRecord',
    contracts.AuditEntryRecord,
    {
      id: ID,
      org_id: ID,
      occurred_at: AT,
      action: 'created',
      resource_type: 'license',
      resource_id: OTHER,
      actor: { api_key_id: OTHER, prefix: 'lk_abc', name: 'ci' },
      request_id: 'req-1',
      ip: null,
      changes: { after: { id: OTHER } },
    },
  ],
  [
    'SyncReportRecord',
    contracts.SyncReportRecord,
    {
      report_id: ID,
      org_id: ID,
      license_id: OTHER,
      product_id: ID,
      serial: 'BENCH-A',
      hardware_fingerprint: 'fp',
      app_version: null,
      features_used: ['export'],
      seats_in_use: 1,
      status: 'active',
      received_at: AT,
    },
  ],
];

const nest = new ValidationPipe(VALIDATION_OPTIONS);

async function nestVerdict(type: Class, raw: unknown): Promise<object | undefined> {
  try {
    return (await nest.transform(structuredClone(raw), { type: 'body', metatype: type })) as object;
  } catch (error) {
    if (error instanceof DomainError) return undefined;
    throw error;
  }
}

function recordVerdict(type: Class, raw: object): object | undefined {
  const instance = plainToInstance(type, structuredClone(raw));
  return validateSync(instance, { forbidUnknownValues: true }).length === 0 ? instance : undefined;
}

/** Edits of a sample: a member (or a nested one) replaced by a value of any shape, or removed. */
function edits(sample: Record<string, unknown>) {
  const paths: string[][] = [['unknown_member']];
  for (const [key, value] of Object.entries(sample)) {
    paths.push([key]);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const inner of Object.keys(value)) paths.push([key, inner]);
      paths.push([key, 'unknown_member']);
    }
  }
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(ID, AT, '', 'x'.repeat(201), 'a\u0000b', 0, -1, 1.5, 2 ** 31, null, [], {}, ['']),
  );
  return fc.array(fc.tuple(fc.constantFrom(...paths), fc.option(value, { nil: undefined })), {
    minLength: 1,
    maxLength: 3,
  });
}

function edited(
  sample: Record<string, unknown>,
  changes: Array<[string[], unknown]>,
): Record<string, unknown> {
  const raw = structuredClone(sample);
  for (const [path, value] of changes) {
    let target: Record<string, unknown> = raw;
    for (const key of path.slice(0, -1)) {
      const next = target[key];
      if (typeof next !== 'object' || next === null || Array.isArray(next)) break;
      target = next as Record<string, unknown>;
    }
    const last = path[path.length - 1];
    if (value === undefined) delete target[last];
    else target[last] = value;
  }
  return raw;
}

describe('compiled validation of the contracts', () => {
  it('compiles every contract class but the query strings, which convert their numbers', () => {
    const validated = Object.entries(contracts).filter(
      ([, value]) =>
        typeof value === 'function' &&
        getMetadataStorage().getTargetValidationMetadatas(value, '', false, false).length > 0,
    );
    const notCompiled = validated
      .filter(([, type]) => !compiledValidation(type as Class, { whitelist: true }))
      .map(([name]) => name);
    expect(validated.length).toBeGreaterThan(40);
    expect(
      notCompiled.every((name) => /Query|List.*(Request|Message)|^LicenseUsageRequest$/.test(name)),
    ).toBe(true);
  });

  describe.each(requests)('%s (the edge and the bus)', (_name, type, sample) => {
    const compiled = compiledValidation(type, { whitelist: true })!;

    it('is compiled and accepts the sample as Nest does', async () => {
      expect(compiled).toBeDefined();
      const accepted = compiled.accept(structuredClone(sample));
      expect(accepted).toBeInstanceOf(type);
      expect(accepted).toStrictEqual(await nestVerdict(type, sample));
    });

    it('decides every edit of it as Nest does (property)', async () => {
      await fc.assert(
        fc.asyncProperty(edits(sample), async (changes) => {
          const raw = edited(sample, changes);
          expect(compiled.accept(structuredClone(raw))).toStrictEqual(await nestVerdict(type, raw));
        }),
        { numRuns: 300 },
      );
    });
  });

  describe.each(records)('%s (a stream record)', (_name, type, sample) => {
    const compiled = compiledValidation(type, { whitelist: false })!;

    it('is compiled and accepts the sample as class-validator does', () => {
      expect(compiled).toBeDefined();
      const accepted = compiled.accept(structuredClone(sample));
      expect(accepted).toBeInstanceOf(type);
      expect(accepted).toStrictEqual(recordVerdict(type, sample));
    });

    it('decides every edit of it as class-validator does (property)', () => {
      fc.assert(
        fc.property(edits(sample), (changes) => {
          const raw = edited(sample, changes);
          expect(compiled.accept(structuredClone(raw))).toStrictEqual(recordVerdict(type, raw));
        }),
        { numRuns: 300 },
      );
    });
  });
});
