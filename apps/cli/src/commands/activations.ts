import { Command } from 'commander';
import { ApiOptions, callApi } from '../api-client';
import type { CliIo } from '../cli-io';
import { addRemove, apiCommand, commandGroup, pick } from '../command-kit';
import { integer } from '../option-parsers';
import { print, table } from '../output';

const ACTIVATION_COLUMNS = ['id', 'license_id', 'fingerprint', 'hostname', 'last_heartbeat_at', 'expires_at'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `activations`: the machines that hold a seat, and freeing one. */
export function registerActivationCommands(program: Command, io: CliIo): void {
  const activations = commandGroup(program, io, 'activations', 'Activations: the machines holding seats');
  apiCommand(io, activations.command('list').description('List activations, newest first'))
    .option('--license <license>', "only this license's, by id or serial")
    .option('--page <n>', 'page (from 1)', integer)
    .option('--per-page <n>', 'per page (1..100)', integer)
    .action(async (o: ApiOptions & { license?: string; page?: number; perPage?: number }) => {
      const query = new URLSearchParams();
      if (o.license !== undefined) query.set(UUID.test(o.license) ? 'license_id' : 'license_key', o.license);
      if (o.page !== undefined) query.set('page', String(o.page));
      if (o.perPage !== undefined) query.set('per_page', String(o.perPage));
      const body = await callApi(io, o, 'GET', `/v1/activations${query.size ? `?${query}` : ''}`);
      const rows = body['activations'] as Record<string, unknown>[];
      print(
        io,
        o,
        body,
        () =>
          `${table(rows.map((row) => pick(row, ACTIVATION_COLUMNS)))}${rows.length} of ${body.total as number}\n`,
      );
    });
  addRemove(io, activations, 'delete', 'Free a seat: the machine must activate again', '/v1/activations');
}
