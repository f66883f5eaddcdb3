import { EntityManager, In } from 'typeorm';
import { DomainError } from '@licensing/shared/errors';
import { EntitlementEntity } from '../entitlements/entitlement.entity';
import { sortCodes } from '../entitlements/license-entitlements';
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
  const byPolicy = new Map<string, string[]>();
  for (const { policy_id, code } of rows) byPolicy.set(policy_id, [...(byPolicy.get(policy_id) ?? []), code]);
  for (const policy of policies) policy.entitlements = sortCodes(byPolicy.get(policy.id) ?? []);
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
  const wanted = sortCodes(codes);
  const entitlements =
    wanted.length === 0
      ? []
      : await manager.find(EntitlementEntity, {
          where: { orgId: policy.orgId, code: In(wanted) },
          lock: { mode: 'pessimistic_read' },
        });
  const known = new Set(entitlements.map((entitlement) => entitlement.code));
  const unknown = wanted.filter((code) => !known.has(code));
  if (unknown.length > 0) {
    throw new DomainError(
      'unknown_entitlement',
      `No entitlement of the organization has the code${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`,
    );
  }
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
  policy.entitlements = wanted;
}
