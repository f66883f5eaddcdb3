import { readFile, writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { decodeLicense } from '@licensing/license-verifier';
import { ApiOptions, callApi } from '../api-client';
import { CliError, type CliIo } from '../cli-io';
import { addGet, addList, apiCommand, commandGroup, compact, pick, segment } from '../command-kit';
import { integer } from '../option-parsers';
import { print, table } from '../output';
import { licenseId } from './licenses';

const RELAY_FILE_COLUMNS = ['id', 'license_id', 'site', 'issued_at', 'expires_at'];

/** A file's text, or a usage error naming it. */
async function readText(file: string): Promise<string> {
  return (
    await readFile(file).catch(() => {
      throw new CliError(`cannot read ${file}`);
    })
  ).toString('utf8');
}

/** The site and public key of a relay request (`licensing-relay init` writes it). */
async function relayRequest(file: string): Promise<{ site: string; public_key: string }> {
  let request: unknown;
  try {
    request = JSON.parse(await readText(file));
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`${file} is not JSON`);
  }
  const { kind, site, public_key } = (request ?? {}) as Record<string, unknown>;
  if (kind !== 'relay_request' || typeof site !== 'string' || typeof public_key !== 'string') {
    throw new CliError(`${file} is not a relay request`);
  }
  return { site, public_key };
}

/**
 * `relay-files` (issue a relay its license file, list them) and `relay-reports` (import a relay's
 * usage report). A relay leases a floating license's seats on a network with no internet.
 */
export function registerRelayCommands(program: Command, io: CliIo): void {
  const files = commandGroup(
    program,
    io,
    'relay-files',
    'Files that let a relay lease a floating license offline',
  );
  apiCommand(
    io,
    files
      .command('create')
      .description("Issue a relay file for a floating license, from the relay's request")
      .argument('<license>', 'the license (id or serial)'),
  )
    .option('--request <file>', 'the relay request (licensing-relay init writes it)')
    .option('--site <name>', 'the relay site (instead of --request)')
    .option('--public-key <file>', "the relay's public key, a PEM file (instead of --request)")
    .option(
      '--ttl <seconds>',
      "how long the file is valid (3600..31536000; default: the organization's)",
      integer,
    )
    .option('-o, --output <file>', 'where to write it (default: <SERIAL>.relay.lic)')
    .action(
      async (
        typed: string,
        o: ApiOptions & {
          request?: string;
          site?: string;
          publicKey?: string;
          ttl?: number;
          output?: string;
        },
      ) => {
        const relay = o.request
          ? await relayRequest(o.request)
          : { site: o.site, public_key: o.publicKey === undefined ? undefined : await readText(o.publicKey) };
        if (relay.site === undefined || relay.public_key === undefined) {
          throw new CliError('give --request, or both --site and --public-key', 2);
        }
        const id = await licenseId(io, o, typed);
        const body = await callApi(
          io,
          o,
          'POST',
          `/v1/licenses/${segment(id)}/relay-files`,
          compact({ ...relay, ttl_seconds: o.ttl }),
        );
        const bytes = Buffer.from(body.relay_file as string, 'base64');
        const serial = decodeLicense(new Uint8Array(bytes))?.serial ?? id;
        const file = o.output ?? `${serial}.relay.lic`;
        await writeFile(file, bytes);
        const { relay_file: _file, ...saved } = body;
        print(
          io,
          o,
          { ...saved, file },
          () => `${file} (relay file ${body.id as string}, expires ${body.expires_at as string})\n`,
        );
      },
    );
  addList(io, files, 'relay files', 'relay_files', '/v1/relay-files', RELAY_FILE_COLUMNS, (c) =>
    c.option('--license-id <id>', 'only the relay files of this license'),
  );
  addGet(io, files, 'a relay file', '/v1/relay-files', [...RELAY_FILE_COLUMNS, 'product_id', 'created_at']);

  const reports = commandGroup(program, io, 'relay-reports', "A relay's usage reports");
  apiCommand(
    io,
    reports
      .command('import')
      .description("Import a relay's usage report into analytics (each lease counts once)")
      .argument('<file>', 'the report (licensing-relay report export writes it)'),
  ).action(async (file: string, o: ApiOptions) => {
    const report = (await readText(file)).trim();
    const body = await callApi(io, o, 'POST', '/v1/relay-reports', { report });
    print(io, o, body, () => table([pick(body, ['report_id', 'relay_file_id', 'leases', 'counted'])]));
  });
}
