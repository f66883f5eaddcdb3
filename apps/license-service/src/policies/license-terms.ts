import type { MachineMatchingRule, OverageRule } from '@licensing/contracts';
import type { CatalogProductEntity } from '../catalog/catalog-product.entity';
import type { PolicyEntity } from './policy.entity';

/**
 * The limits the online paths apply to one license: its policy's, read from the policy row at the
 * time of the request, or a plain license's (its product's heartbeat, no grace, no process limit,
 * no overage, today's component rule).
 */
export interface LicenseTerms {
  /** Seconds between heartbeats of a machine or a process; null: none required. */
  heartbeatInterval: number | null;
  /** Seconds a lapsed machine or process keeps its place, during which a heartbeat revives it. */
  graceSeconds: number;
  maxProcesses: number | null;
  overage: OverageRule;
  /** Null for a license without a policy: every component the request names must be equal. */
  machineMatching: MachineMatchingRule | null;
}

export function termsOf(
  product: Pick<CatalogProductEntity, 'activationHeartbeatInterval'>,
  policy: PolicyEntity | null,
): LicenseTerms {
  if (!policy) {
    return {
      heartbeatInterval: product.activationHeartbeatInterval,
      graceSeconds: 0,
      maxProcesses: null,
      overage: 'none',
      machineMatching: null,
    };
  }
  // The policy's interval replaces the product's, null included (no heartbeat required).
  return {
    heartbeatInterval: policy.heartbeatIntervalSeconds,
    graceSeconds: policy.heartbeatGraceSeconds,
    maxProcesses: policy.maxProcesses,
    overage: policy.overage,
    machineMatching: policy.machineMatching,
  };
}

/** How many machines a license may hold with its overage: `floor(max × factor)`, or no ceiling. */
export function overageCeiling(maxMachines: number, overage: OverageRule): number {
  switch (overage) {
    case 'none':
      return maxMachines;
    case '1.25x':
      return Math.floor(maxMachines * 1.25);
    case '1.5x':
      return Math.floor(maxMachines * 1.5);
    case '2x':
      return maxMachines * 2;
    case 'always':
      return Infinity;
  }
}

/**
 * Whether the components a request names match those recorded at activation. Without a policy, every
 * named one must be equal (and names not recorded fail). With one, the policy's rule counts the
 * recorded components the request gives equal: `any` one, `two` (or all, when fewer are recorded),
 * `most` (more than half), `all`. A machine that recorded none matches any request.
 */
export function componentsMatch(
  recorded: Record<string, string>,
  given: Record<string, string>,
  rule: MachineMatchingRule | null,
): boolean {
  if (rule === null) return Object.entries(given).every(([name, value]) => recorded[name] === value);
  const names = Object.keys(recorded);
  if (names.length === 0) return true;
  const equal = names.filter((name) => given[name] === recorded[name]).length;
  switch (rule) {
    case 'any':
      return equal >= 1;
    case 'two':
      return equal >= Math.min(2, names.length);
    case 'most':
      return equal * 2 > names.length;
    case 'all':
      return equal === names.length;
  }
}
