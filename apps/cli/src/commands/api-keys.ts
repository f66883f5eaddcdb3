import { Command } from 'commander';
import { ApiOptions, callApi } from '../api-client';
import type { CliIo } from '../cli-io';
import { addList, addRemove, apiCommand, commandGroup, pick } from '../command-kit';
import { csv } from '../option-parsers';
import { print, table } from '../output';

/** `api-keys`: the organization's keys to the API. */
export function registerApiKeyCommands(program: Command, io: CliIo): void {
  const apiKeys = commandGroup(program, io, 'api-keys', 'API keys');
  apiCommand(io, apiKeys.command('create').description('Issue an API key (shown once)'))
    .requiredOption('--name <name>', 'its name')
    .option('--scopes <scopes>', 'comma-separated: admin, read, client', csv, ['admin'])
    .action(async (o: ApiOptions & { name: string; scopes: string[] }) => {
      const body = await callApi(io, o, 'POST', '/v1/api-keys', { name: o.name, scopes: o.scopes });
      print(io, o, body, () => table([pick(body, ['id', 'name', 'scopes', 'key'])]));
    });
  addList(io, apiKeys, 'API keys', 'api_keys', '/v1/api-keys', [
    'id',
    'name',
    'scopes',
    'prefix',
    'created_at',
  ]);
  addRemove(io, apiKeys, 'revoke', 'Revoke an API key', '/v1/api-keys');
}
