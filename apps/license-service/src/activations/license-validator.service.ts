import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CredentialReach } from '@licensing/shared/logging';
import { preparedEntityQuery, preparedStatement } from '@licensing/shared/database';
import {
  MachineMatchingRule,
  ValidateLicenseDto,
  ValidationCode,
  ValidationResultView,
  effectiveStatus,
} from '@licensing/contracts';
import { EntitlementEntity } from '../entitlements/entitlement.entity';
import { sortCodes } from '../entitlements/license-entitlements';
import { LicenseEntitlementEntity } from '../entitlements/license-entitlement.entity';
import { LicenseEntity } from '../licenses/license.entity';
import { PolicyEntity } from '../policies/policy.entity';
import { PolicyEntitlementEntity } from '../policies/policy-entitlement.entity';
import { ActivationEntity } from './activation.entity';
import { toActivationView } from './activation.mapper';
import { PolicyLimits, activationCode, licenseVerdict } from './validation-code';

const DETAILS: Record<ValidationCode, string> = {
  VALID: 'The license is valid',
  NOT_FOUND: 'No license has this key',
  REVOKED: 'The license has been revoked',
  SUSPENDED: 'The license is suspended',
  EXPIRED: 'The license has expired',
  OVERDUE: 'The license has not checked in within its check-in interval',
  FINGERPRINT_MISMATCH: 'The license is bound to another machine',
  NO_ACTIVATION: 'This machine has not activated the license',
  HEARTBEAT_DEAD: "This machine's activation missed its heartbeat",
  COMPONENTS_MISMATCH: "The machine's components do not match those recorded at its activation",
  ENTITLEMENTS_MISSING: 'The license lacks an entitlement the request names',
  OVERAGE: 'The license is valid, and holds more machines than its max_seats',
};

/**
 * The license row, its entitlement codes (its policy's and its own), and its policy's limits under their own names (null
 * without a policy).
 */
type LicenseRow = LicenseEntity & {
  entitlementCodes: string[];
  policyCheckInIntervalDays: number | null;
  policyMachineMatching: MachineMatchingRule | null;
  machinesInUse: number | null;
};

/**
 * Validate-by-key: the first code that applies, in the order of validation-code.ts. A license token
 * sees only its license (any other key is `NOT_FOUND`), a machine token only its own activation
 * (another machine's is `NO_ACTIVATION`).
 */
@Injectable()
export class LicenseValidator {
  /**
   * The two reads of validate, prepared: the license by key with its entitlements, its policy's
   * limits and, for a policy license, the count of machines holding a seat (one round trip); then
   * the machine's activation of it.
   */
  private readonly licenseByKey: (values: unknown[]) => Promise<LicenseRow[]>;
  private readonly activationOf: (values: unknown[]) => Promise<ActivationEntity[]>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    const { tablePath, columns } = dataSource.getMetadata(LicenseEntity);
    const policies = dataSource.getMetadata(PolicyEntity).tablePath;
    const activations = dataSource.getMetadata(ActivationEntity).tablePath;
    const held = dataSource.getMetadata(LicenseEntitlementEntity).tablePath;
    const entitlements = dataSource.getMetadata(EntitlementEntity).tablePath;
    const granted = dataSource.getMetadata(PolicyEntitlementEntity).tablePath;
    const select = columns
      .map((column) => `l."${column.databaseName}" AS "${column.propertyName}"`)
      .join(', ');
    this.licenseByKey = preparedStatement<LicenseRow>(
      dataSource,
      'validate-license-policy',
      `SELECT ${select},
              ARRAY(SELECT e.code FROM ${held} le JOIN ${entitlements} e ON e.id = le.entitlement_id
                     WHERE le.license_id = l.id
                    UNION
                    SELECT e.code FROM ${granted} pe JOIN ${entitlements} e ON e.id = pe.entitlement_id
                     WHERE pe.policy_id = l.policy_id) AS "entitlementCodes",
              p.check_in_interval_days AS "policyCheckInIntervalDays",
              p.machine_matching AS "policyMachineMatching",
              CASE WHEN p.id IS NOT NULL THEN
                (SELECT count(*)::int FROM ${activations} a
                  WHERE a.license_id = l.id
                    AND (a.expires_at IS NULL
                         OR a.expires_at + make_interval(secs => p.heartbeat_grace_seconds) > $3::timestamptz))
              END AS "machinesInUse"
         FROM ${tablePath} l
         LEFT JOIN ${policies} p ON p.id = l.policy_id
        WHERE l.serial = $1 AND l.org_id = $2`,
    );
    this.activationOf = preparedEntityQuery(
      dataSource,
      ActivationEntity,
      'validate-activation',
      'license_id = $1 AND fingerprint = $2',
    );
  }

  async validate(
    orgId: string,
    dto: ValidateLicenseDto,
    reach: CredentialReach,
  ): Promise<ValidationResultView> {
    const now = new Date();
    const [license] = await this.licenseByKey([dto.key, orgId, now]);
    if (!license || (reach.kind !== 'organization' && license.id !== reach.license_id)) {
      return answer('NOT_FOUND', null, null);
    }
    const policy: PolicyLimits | null =
      license.policyMachineMatching === null
        ? null
        : {
            checkInIntervalDays: license.policyCheckInIntervalDays,
            machineMatching: license.policyMachineMatching,
            machinesInUse: license.machinesInUse ?? 0,
          };
    license.entitlements = sortCodes(license.entitlementCodes);
    const status = effectiveStatus(license, now);
    const summary = {
      serial: license.serial,
      product_id: license.productId,
      customer_id: license.customerId,
      features: license.features,
      entitlements: license.entitlements,
      valid_from: license.validFrom.toISOString(),
      valid_until: license.validUntil?.toISOString() ?? null,
      is_expired: status === 'expired',
      status,
      max_seats: license.maxSeats,
    };
    const verdict = licenseVerdict(license, policy, dto, now);
    if ('code' in verdict) return answer(verdict.code, summary, null);
    const [found] = await this.activationOf([license.id, verdict.activationOf]);
    const activation = reach.kind === 'machine' && found?.id !== reach.activation_id ? null : found;
    const code = activationCode(license, policy, activation ?? null, dto, now);
    return answer(code, summary, activation ? toActivationView(activation) : null);
  }
}

/** `valid` is true for VALID, and for OVERAGE: the license may run, beyond its seats by its policy. */
function answer(
  code: ValidationCode,
  license: ValidationResultView['license'],
  activation: ValidationResultView['activation'],
): ValidationResultView {
  const valid = code === 'VALID' || code === 'OVERAGE';
  return { valid, code, detail: DETAILS[code], license, activation };
}
