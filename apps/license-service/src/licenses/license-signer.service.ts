import { KeyObject } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import {
  BuildClaimsInput,
  CheckoutExtraClaims,
  CheckoutInput,
  LicenseClaims,
  buildCheckoutClaims,
  buildClaims,
  signJws,
} from '@licensing/license-format';
import { DomainError } from '@licensing/shared/errors';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { loadEntitlements } from '../entitlements/license-entitlements';
import { SigningKeysService } from '../signing/signing-keys.service';
import { LicenseEntity } from './license.entity';

/**
 * Signs a license's current state into its file. Used on creation and on every change that a
 * client holding the file must see (PATCH, entitlements attached or detached, binding on first
 * activation). A file already handed out keeps the claims it was signed with. The product's current key
 * pair signs, so rotating a product's key moves licenses to the new key as they change; an
 * unchanged license keeps the file, and the key, it was issued with.
 */
@Injectable()
export class LicenseSigner {
  constructor(private readonly signingKeys: SigningKeysService) {}

  async sign(
    manager: EntityManager,
    license: LicenseEntity,
    product: CatalogProductEntity,
    now: Date,
  ): Promise<void> {
    const { keyPairId, privateKey } = await this.signingKey(manager, license, product);
    const claims = buildClaims(await claimsInput(manager, license, product, now));
    license.keyPairId = keyPairId;
    license.jws = signJws(claims, { kid: keyPairId, privateKey });
  }

  /**
   * A checkout file: the license as it is now, with its own expiry, and for an activation the
   * machine's fingerprint. `extra` carries claims that other features add (a policy's limits).
   * Nothing is stored: the license keeps its own file and key pair.
   */
  async signCheckout(
    manager: EntityManager,
    license: LicenseEntity,
    product: CatalogProductEntity,
    now: Date,
    checkout: CheckoutInput,
    extra: CheckoutExtraClaims = {},
  ): Promise<{ jws: string; claims: LicenseClaims }> {
    const { keyPairId, privateKey } = await this.signingKey(manager, license, product);
    const claims = buildCheckoutClaims(await claimsInput(manager, license, product, now), checkout, extra);
    return { jws: signJws(claims, { kid: keyPairId, privateKey }), claims };
  }

  private async signingKey(
    manager: EntityManager,
    license: LicenseEntity,
    product: CatalogProductEntity,
  ): Promise<{ keyPairId: string; privateKey: KeyObject }> {
    const keyPairId = product.keyPairId ?? license.keyPairId;
    if (!keyPairId)
      throw new DomainError('key_pair_missing', `Product ${product.id} has no key pair assigned`);
    // Inside the caller's transaction: a second pooled connection per signature would exhaust the pool.
    const privateKey = await this.signingKeys.privateKey(license.orgId, keyPairId, manager);
    if (!privateKey)
      throw new DomainError('key_pair_missing', `Product ${product.id} has no usable key pair`);
    return { keyPairId, privateKey };
  }
}

async function claimsInput(
  manager: EntityManager,
  license: LicenseEntity,
  product: CatalogProductEntity,
  now: Date,
): Promise<BuildClaimsInput> {
  // Read in the caller's transaction unless the caller set them: a file never drops an entitlement.
  if (license.entitlements === undefined) await loadEntitlements(manager, [license]);
  return {
    licenseId: license.id,
    serial: license.serial,
    orgId: license.orgId,
    productId: product.id,
    productCode: product.code,
    licenseType: license.licenseType,
    customerId: license.customerId,
    customerEmail: license.customerEmail,
    features: license.features,
    maxSeats: license.maxSeats,
    hardwareBinding: license.hardwareBinding,
    validFrom: license.validFrom,
    validUntil: license.validUntil,
    issuedAt: now,
    entitlements: license.entitlements,
  };
}
