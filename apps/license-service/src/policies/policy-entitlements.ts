import { EntityManager } from 'typeorm';
import { EntitlementEntity } from '../entitlements/entitlement.entity';
import { codesByOwner, lockEntitlements, sortCodes } from '../entitlements/license-entitlements';
import { PolicyEntitlementEntity } from './policy-entitlement.entity';
import type { PolicyEntity } from './policy.entity';

/** Sets `entitlements` on each policy: the codes it grants, sorted by code point. One query. */
export async function loadPolicyEntitlements(
  manager: EntityManager,
  policies: PolicyEntity[],
): Promise<void> {
  if (policies.length === 0) return;
  const rows = await manager
    .createQueryBuilder(PolicyEntitlementEntity, 'pe')
    .innerJoin(EntitlementEntity, 'e', 'e.id = pe.entitlement_id')
    .select('pe.policy_id', 'policy_id')
    .addSelect('e.code', 'code')
    .where('pe.policy_id IN (:...ids)', { ids: policies.map((policy) => policy.id) })
    .getRawMany<{ policy_id: string; code: string }>();
  const byPolicy = codesByOwner(rows.map(({ policy_id, code }) => [policy_id, code]));
  for (const policy of policies) policy.entitlements = byPolicy.get(policy.id) ?? [];
}

/**
 * Makes `codes` the policy's whole list. Each entitlement is locked FOR SHARE, so that a concurrent
 * delete waits and then sees it in use. Unknown codes: `422 unknown_entitlement` naming them.
 */
export async function replacePolicyEntitlements(
  manager: EntityManager,
  policy: PolicyEntity,
  codes: string[],
  now: Date,
): Promise<void> {
  const entitlements = await lockEntitlements(manager, policy.orgId, codes);
  await manager.delete(PolicyEntitlementEntity, { policyId: policy.id });
  if (entitlements.length > 0) {
    await manager.insert(
      PolicyEntitlementEntity,
      entitlements.map((entitlement) => ({
        policyId: policy.id,
        entitlementId: entitlement.id,
        orgId: policy.orgId,
        createdAt: now,
      })),
    );
  }
  policy.entitlements = sortCodes(codes);
}
