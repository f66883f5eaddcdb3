import { Command, Option } from 'commander';
import { ApiOptions, callApi } from '../api-client';
import type { CliIo } from '../cli-io';
import { addGet, addList, addRemove, apiCommand, commandGroup, compact, pick, segment } from '../command-kit';
import { csv, integer, optionalInteger, orNull } from '../option-parsers';
import { print, table } from '../output';

const LICENSE_TYPES = ['perpetual', 'subscription', 'trial', 'node_locked', 'floating'];
const OVERAGE_RULES = ['none', '1.25x', '1.5x', '2x', 'always'];
const MATCHING_RULES = ['any', 'two', 'most', 'all'];
const USES_RESET_PERIODS = ['day', 'week', 'month', 'none'];
const POLICY_COLUMNS = ['id', 'name', 'product_id', 'license_type', 'duration_days', 'max_machines'];

/** `policies`: a product's licensing model, which its licenses follow. */
export function registerPolicyCommands(program: Command, io: CliIo): void {
  const policies = commandGroup(program, io, 'policies', "Policies: a product's licensing model");
  policyOptions(apiCommand(io, policies.command('create').description('Create a policy')))
    .requiredOption('--product-id <id>', 'the product')
    .requiredOption('--name <name>', 'its name')
    .action(async (o: ApiOptions & Record<string, unknown>) => {
      const body = await callApi(io, o, 'POST', '/v1/policies', policyBody(o, true));
      print(io, o, body, () => table([pick(body, POLICY_COLUMNS)]));
    });
  addList(io, policies, 'policies', 'policies', '/v1/policies', POLICY_COLUMNS, (command) =>
    command.option('--product-id <id>', 'only this product'),
  );
  addGet(io, policies, 'a policy', '/v1/policies', [
    ...POLICY_COLUMNS,
    'max_processes',
    'heartbeat_interval_seconds',
    'heartbeat_grace_seconds',
    'check_in_interval_days',
    'overage',
    'machine_matching',
    'max_uses',
    'uses_reset',
    'entitlements',
  ]);
  policyOptions(apiCommand(io, policies.command('update').description('Change a policy').argument('<id>')))
    .option('--name <name>', 'its name')
    .action(async (id: string, o: ApiOptions & Record<string, unknown>) => {
      const body = await callApi(io, o, 'PATCH', `/v1/policies/${segment(id)}`, policyBody(o, false));
      print(io, o, body, () => table([pick(body, POLICY_COLUMNS)]));
    });
  addRemove(io, policies, 'delete', 'Delete a policy no license follows', '/v1/policies');
}

/** The rules of a policy: `create` and `update` take the same ones. */
function policyOptions(command: Command): Command {
  return command
    .addOption(new Option('--type <type>', 'the license type of new licenses').choices(LICENSE_TYPES))
    .option('--duration-days <days>', "validity of new licenses ('none': perpetual)", optionalInteger)
    .option('--max-machines <n>', 'machines per license', integer)
    .option('--max-processes <n>', "processes per machine ('none': no limit)", optionalInteger)
    .option('--heartbeat-interval <seconds>', "heartbeat interval ('none': no heartbeat)", optionalInteger)
    .option('--heartbeat-grace <seconds>', 'how long a lapsed machine or process keeps its place', integer)
    .option(
      '--check-in-interval-days <days>',
      "days between check-ins ('none': not required)",
      optionalInteger,
    )
    .addOption(new Option('--overage <rule>', 'activations past max machines').choices(OVERAGE_RULES))
    .addOption(new Option('--machine-matching <rule>', 'components that must match').choices(MATCHING_RULES))
    .option('--max-uses <n>', "uses each license may count ('none': no limit)", optionalInteger)
    .addOption(
      new Option('--uses-reset <period>', "when uses go back to 0, UTC ('none': never)").choices(
        USES_RESET_PERIODS,
      ),
    )
    .option('--entitlements <codes>', "comma-separated entitlement codes its licenses hold ('': none)", csv);
}

/** `none` becomes null: the API's word for a limit switched off. */
function policyBody(o: Record<string, unknown>, create: boolean): Record<string, unknown> {
  return compact({
    ...(create ? { product_id: o['productId'] } : {}),
    name: o['name'],
    license_type: o['type'],
    duration_days: orNull(o['durationDays']),
    max_machines: o['maxMachines'],
    max_processes: orNull(o['maxProcesses']),
    heartbeat_interval_seconds: orNull(o['heartbeatInterval']),
    heartbeat_grace_seconds: o['heartbeatGrace'],
    check_in_interval_days: orNull(o['checkInIntervalDays']),
    overage: o['overage'],
    machine_matching: o['machineMatching'],
    max_uses: orNull(o['maxUses']),
    uses_reset: orNull(o['usesReset']),
    entitlements: o['entitlements'],
  });
}
