import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CheckoutMessage, CheckoutView, effectiveStatus } from '@licensing/contracts';
import { CheckoutExtraClaims, LicenseClaims, RelayClaim, blobFromJws } from '@licensing/license-format';
import { DomainError } from '@licensing/shared/errors';
import { CredentialReach } from '@licensing/shared/logging';
import { LicenseEntity } from './license.entity';
import { LicenseSigner } from './license-signer.service';

/**
 * License checkout: a license file signed now that expires on its own (`exp`), for an application
 * that runs offline and checks out again before then. It changes nothing: no row, no event, no
 * audit entry. A revoked, suspended or expired license cannot be checked out. A relay file is
 * signed the same way, with one claim more (RelayFilesService stores and audits it).
 */
@Injectable()
export class LicenseCheckoutService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly signer: LicenseSigner,
  ) {}

  /** The checkout of a license by id. A license token reaches its own license only. */
  checkoutLicense(
    orgId: string,
    { id, ttl_seconds }: CheckoutMessage,
    reach: CredentialReach,
  ): Promise<CheckoutView> {
    if (reach.kind !== 'organization' && reach.license_id !== id) throw DomainError.notFound('License', id);
    return this.checkout(orgId, id, ttl_seconds);
  }

  /**
   * Signs the license `licenseId` as it is now into a file that expires `ttlSeconds` from now, or
   * at the license's `valid_until` if that comes first. `fingerprint` binds the file to a machine.
   */
  async checkout(
    orgId: string,
    licenseId: string,
    ttlSeconds: number,
    fingerprint?: string,
  ): Promise<CheckoutView> {
    const now = new Date();
    const manager = this.dataSource.manager;
    const license = await activeLicense(manager, orgId, licenseId, now);
    const { jws, claims } = await this.signer.signCheckout(
      manager,
      license,
      license.product!,
      now,
      { expiresAt: new Date(now.getTime() + ttlSeconds * 1000), fingerprint },
      checkoutExtraClaims(license),
    );
    return {
      license_blob: blobFromJws(jws),
      issued_at: new Date(claims.iat * 1000).toISOString(),
      expires_at: new Date(claims.exp! * 1000).toISOString(),
    };
  }

  /**
   * A relay file: the checkout of a floating license, signed in `manager`'s transaction, with the
   * claim `relay` naming the relay it is issued to. Only a floating license has seats to lease.
   */
  async relayFile(
    manager: EntityManager,
    orgId: string,
    licenseId: string,
    ttlSeconds: number,
    relay: RelayClaim,
    now: Date,
  ): Promise<{ license: LicenseEntity; jws: string; claims: LicenseClaims }> {
    const license = await findLicense(manager, orgId, licenseId);
    if (license.licenseType !== 'floating') {
      throw new DomainError(
        'license_not_floating',
        `License ${licenseId} is ${license.licenseType}: a relay file is issued for a floating license only`,
      );
    }
    assertActive(license, now);
    const { jws, claims } = await this.signer.signCheckout(
      manager,
      license,
      license.product!,
      now,
      { expiresAt: new Date(now.getTime() + ttlSeconds * 1000) },
      { ...checkoutExtraClaims(license), relay },
    );
    return { license, jws, claims };
  }
}

/** The license with its product and policy (what signing needs); another organization's is a 404. */
async function findLicense(manager: EntityManager, orgId: string, licenseId: string): Promise<LicenseEntity> {
  const license = await manager.findOne(LicenseEntity, {
    where: { id: licenseId, orgId },
    relations: { product: true, policy: true },
  });
  if (!license) throw DomainError.notFound('License', licenseId);
  return license;
}

/** The license, if it is active now. */
async function activeLicense(
  manager: EntityManager,
  orgId: string,
  licenseId: string,
  now: Date,
): Promise<LicenseEntity> {
  const license = await findLicense(manager, orgId, licenseId);
  assertActive(license, now);
  return license;
}

function assertActive(license: LicenseEntity, now: Date): void {
  const status = effectiveStatus(license, now);
  if (status !== 'active') {
    throw new DomainError(
      'license_not_active',
      `License ${license.id} is ${status}: it cannot be checked out`,
    );
  }
}

/**
 * The claims a checkout carries beside the license's own: for a license of a policy, the limits
 * that apply to it now (`policy`). `max_machines` and `max_uses` are the license's own values,
 * which a license may set apart from its policy; the others are the policy's.
 */
function checkoutExtraClaims(license: LicenseEntity): CheckoutExtraClaims {
  const policy = license.policy;
  if (!policy) return {};
  return {
    policy: {
      id: policy.id,
      name: policy.name,
      max_machines: license.maxSeats,
      max_processes: policy.maxProcesses,
      max_uses: license.maxUses,
      uses_reset: policy.usesReset,
      heartbeat_interval_seconds: policy.heartbeatIntervalSeconds,
      heartbeat_grace_seconds: policy.heartbeatGraceSeconds,
      check_in_interval_days: policy.checkInIntervalDays,
      overage: policy.overage,
      machine_matching: policy.machineMatching,
    },
  };
}
