import { Command } from 'commander';
import { ApiOptions, callApi } from '../api-client';
import type { CliIo } from '../cli-io';
import {
  addRemove,
  apiCommand,
  commandGroup,
  isUuid,
  pagingQuery,
  printPage,
  withPaging,
} from '../command-kit';

const ACTIVATION_COLUMNS = ['id', 'license_id', 'fingerprint', 'hostname', 'last_heartbeat_at', 'expires_at'];

/** `activations`: the machines that hold a seat, and freeing one. */
export function registerActivationCommands(program: Command, io: CliIo): void {
  const activations = commandGroup(program, io, 'activations', 'Activations: the machines holding seats');
  withPaging(
    apiCommand(io, activations.command('list').description('List activations, newest first')).option(
      '--license <license>',
      "only this license's, by id or serial",
    ),
  ).action(async (o: ApiOptions & { license?: string; page?: number; perPage?: number }) => {
    const query = pagingQuery(o);
    if (o.license !== undefined) query.set(isUuid(o.license) ? 'license_id' : 'license_key', o.license);
    const body = await callApi(io, o, 'GET', `/v1/activations${query.size ? `?${query}` : ''}`);
    printPage(io, o, body, 'activations', ACTIVATION_COLUMNS);
  });
  addRemove(io, activations, 'delete', 'Free a seat: the machine must activate again', '/v1/activations');
}
