import { LicenseView } from '@licensing/contracts';
import { blobFromJws } from '@licensing/license-format';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { LicenseEntity } from './license.entity';
import { effectiveStatus } from '@licensing/contracts';

export function toLicenseView(
  license: LicenseEntity,
  product: Pick<CatalogProductEntity, 'name' | 'code'>,
  options: { withBlob: boolean },
): LicenseView {
  return {
    id: license.id,
    product_id: license.productId,
    product_name: product.name,
    product_code: product.code,
    serial: license.serial,
    license_type: license.licenseType,
    customer_id: license.customerId,
    customer_email: license.customerEmail,
    status: effectiveStatus(license),
    valid_from: license.validFrom.toISOString(),
    valid_until: license.validUntil?.toISOString() ?? null,
    features: license.features,
    max_seats: license.maxSeats,
    hardware_binding: license.hardwareBinding,
    key_pair_id: license.keyPairId,
    entitlements: license.entitlements ?? [],
    uses: license.uses,
    max_uses: license.maxUses,
    created_at: license.createdAt.toISOString(),
    revoked_at: license.revokedAt?.toISOString() ?? null,
    policy_id: license.policyId,
    last_check_in_at: license.lastCheckInAt?.toISOString() ?? null,
    ...(options.withBlob ? { license_blob: blobFromJws(license.jws) } : {}),
  };
}
