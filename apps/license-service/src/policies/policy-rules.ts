import { FieldError } from '@licensing/shared/errors';
import type { PolicyEntity } from './policy.entity';

/**
 * The rules a policy's fields must keep together, checked after a create or a PATCH is applied in
 * memory. A perpetual policy has no duration; a node-locked one has one machine.
 */
export function policyErrors(
  policy: Pick<PolicyEntity, 'licenseType' | 'durationDays' | 'maxMachines'>,
): FieldError[] {
  const errors: FieldError[] = [];
  if (policy.licenseType === 'perpetual' && policy.durationDays !== null) {
    errors.push({ field: 'duration_days', message: 'a perpetual policy has no duration_days (null)' });
  }
  if (policy.licenseType === 'node_locked' && policy.maxMachines !== 1) {
    errors.push({ field: 'max_machines', message: 'a node_locked policy has exactly one machine' });
  }
  return errors;
}
