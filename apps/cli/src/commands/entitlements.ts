import { Command } from 'commander';
import { ApiOptions, callApi } from '../api-client';
import type { CliIo } from '../cli-io';
import { addGet, addList, addRemove, apiCommand, commandGroup, pick, segment } from '../command-kit';
import { print, table } from '../output';

const ENTITLEMENT_COLUMNS = ['id', 'code', 'name', 'created_at'];

/** `entitlements`: the catalog of codes that policies and licenses hold. */
export function registerEntitlementCommands(program: Command, io: CliIo): void {
  const entitlements = commandGroup(program, io, 'entitlements', 'The entitlement catalog');
  apiCommand(io, entitlements.command('create').description('Add an entitlement to the catalog'))
    .requiredOption('--code <code>', 'its code (lowercase; parts joined by ".", "_" or "-"); immutable')
    .requiredOption('--name <name>', 'its name')
    .action(async (o: ApiOptions & { code: string; name: string }) => {
      const body = await callApi(io, o, 'POST', '/v1/entitlements', { code: o.code, name: o.name });
      print(io, o, body, () => table([pick(body, ENTITLEMENT_COLUMNS)]));
    });
  addList(io, entitlements, 'entitlements', 'entitlements', '/v1/entitlements', ENTITLEMENT_COLUMNS);
  addGet(io, entitlements, 'an entitlement', '/v1/entitlements', ENTITLEMENT_COLUMNS);
  apiCommand(
    io,
    entitlements.command('rename').description('Rename an entitlement').argument('<id>').argument('<name>'),
  ).action(async (id: string, name: string, o: ApiOptions) => {
    const body = await callApi(io, o, 'PATCH', `/v1/entitlements/${segment(id)}`, { name });
    print(io, o, body, () => table([pick(body, ENTITLEMENT_COLUMNS)]));
  });
  addRemove(io, entitlements, 'delete', 'Delete an entitlement that no license holds', '/v1/entitlements');
}
