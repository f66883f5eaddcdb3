import { PolicyView } from '@licensing/contracts';
import { PolicyEntity } from './policy.entity';

export function toPolicyView(policy: PolicyEntity): PolicyView {
  return {
    id: policy.id,
    product_id: policy.productId,
    name: policy.name,
    license_type: policy.licenseType,
    duration_days: policy.durationDays,
    max_machines: policy.maxMachines,
    max_processes: policy.maxProcesses,
    max_uses: policy.maxUses,
    uses_reset: policy.usesReset,
    heartbeat_interval_seconds: policy.heartbeatIntervalSeconds,
    heartbeat_grace_seconds: policy.heartbeatGraceSeconds,
    check_in_interval_days: policy.checkInIntervalDays,
    overage: policy.overage,
    machine_matching: policy.machineMatching,
    entitlements: policy.entitlements ?? [],
    created_at: policy.createdAt.toISOString(),
    updated_at: policy.updatedAt.toISOString(),
  };
}
