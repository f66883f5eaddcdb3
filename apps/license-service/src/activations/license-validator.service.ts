import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CredentialReach } from '@licensing/shared/logging';
import { preparedEntityQuery, preparedStatement } from '@licensing/shared/database';
import {
  ValidateLicenseDto,
  ValidationCode,
  ValidationResultView,
  effectiveStatus,
} from '@licensing/contracts';
import { EntitlementEntity } from '../entitlements/entitlement.entity';
import { LicenseEntitlementEntity } from '../entitlements/license-entitlement.entity';
import { sortCodes } from '../entitlements/license-entitlements';
import { LicenseEntity } from '../licenses/license.entity';
import { ActivationEntity } from './activation.entity';
import { toActivationView } from './activation.mapper';
import { activationCode, entitlementsCode, licenseVerdict } from './validation-code';

const DETAILS: Record<ValidationCode, string> = {
  VALID: 'The license is valid',
  NOT_FOUND: 'No license has this key',
  REVOKED: 'The license has been revoked',
  SUSPENDED: 'The license is suspended',
  EXPIRED: 'The license has expired',
  FINGERPRINT_MISMATCH: 'The license is bound to another machine',
  NO_ACTIVATION: 'This machine has not activated the license',
  HEARTBEAT_DEAD: "This machine's activation missed its heartbeat",
  COMPONENTS_MISMATCH: "A component differs from the one recorded at this machine's activation",
  ENTITLEMENTS_MISSING: 'The license lacks an entitlement the request names',
};

/**
 * Validate-by-key: the first code that applies, in the order of validation-code.ts. A license token
 * sees only its license (any other key is `NOT_FOUND`), a machine token only its own activation
 * (another machine's is `NO_ACTIVATION`).
 */
@Injectable()
export class LicenseValidator {
  /** The two reads of validate, prepared: the license by key, then the machine's activation of it. */
  private readonly licenseByKey: (values: unknown[]) => Promise<LicenseEntity[]>;
  private readonly activationOf: (values: unknown[]) => Promise<ActivationEntity[]>;
  /** The license's entitlement codes: the summary holds them, and ENTITLEMENTS_MISSING compares them. */
  private readonly entitlementsOf: (values: unknown[]) => Promise<{ code: string }[]>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    const table = (entity: new () => object) => dataSource.getMetadata(entity).tablePath;
    this.licenseByKey = preparedEntityQuery(
      dataSource,
      LicenseEntity,
      'validate-license',
      'serial = $1 AND org_id = $2',
    );
    this.activationOf = preparedEntityQuery(
      dataSource,
      ActivationEntity,
      'validate-activation',
      'license_id = $1 AND fingerprint = $2',
    );
    this.entitlementsOf = preparedStatement(
      dataSource,
      'validate-entitlements',
      `SELECT e.code FROM ${table(LicenseEntitlementEntity)} le
         JOIN ${table(EntitlementEntity)} e ON e.id = le.entitlement_id
        WHERE le.license_id = $1`,
    );
  }

  async validate(
    orgId: string,
    dto: ValidateLicenseDto,
    reach: CredentialReach,
  ): Promise<ValidationResultView> {
    const now = new Date();
    const [license] = await this.licenseByKey([dto.key, orgId]);
    if (!license || (reach.kind !== 'organization' && license.id !== reach.license_id)) {
      return answer('NOT_FOUND', null, null);
    }
    const status = effectiveStatus(license, now);
    const entitlements = sortCodes((await this.entitlementsOf([license.id])).map((row) => row.code));
    const summary = {
      serial: license.serial,
      product_id: license.productId,
      customer_id: license.customerId,
      features: license.features,
      entitlements,
      valid_from: license.validFrom.toISOString(),
      valid_until: license.validUntil?.toISOString() ?? null,
      is_expired: status === 'expired',
      status,
      max_seats: license.maxSeats,
    };
    const verdict = licenseVerdict(license, dto, now);
    if ('code' in verdict) {
      const code = verdict.code === 'VALID' ? entitlementsCode(entitlements, dto) : verdict.code;
      return answer(code, summary, null);
    }
    const [found] = await this.activationOf([license.id, verdict.activationOf]);
    const activation = reach.kind === 'machine' && found?.id !== reach.activation_id ? null : found;
    const machineCode = activationCode(activation, dto, now);
    const code = machineCode === 'VALID' ? entitlementsCode(entitlements, dto) : machineCode;
    return answer(code, summary, activation ? toActivationView(activation) : null);
  }
}

function answer(
  code: ValidationCode,
  license: ValidationResultView['license'],
  activation: ValidationResultView['activation'],
): ValidationResultView {
  return { valid: code === 'VALID', code, detail: DETAILS[code], license, activation };
}
