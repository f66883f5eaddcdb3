import { writeFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { decodeLicense } from '@licensing/license-verifier';
import { ApiOptions, callApi } from '../api-client';
import { CliError, type CliIo } from '../cli-io';
import {
  IdResolver,
  addGet,
  addList,
  addRemove,
  apiCommand,
  commandGroup,
  isUuid,
  compact,
  pick,
  segment,
} from '../command-kit';
import { csv, integer, optionalInteger, orNull } from '../option-parsers';
import { print, table } from '../output';
import { addLicenseExport, addLicenseImport } from './licenses-bulk';

const LICENSE_COLUMNS = ['id', 'serial', 'status', 'license_type', 'customer_email', 'valid_until'];

/** A license's id, or the id of the license with that serial (one list call, by the exact serial). */
export const licenseId: IdResolver = async (io, options, typed) => {
  if (isUuid(typed)) return typed;
  const found = await callApi(
    io,
    options,
    'GET',
    `/v1/licenses?serial=${encodeURIComponent(typed)}&per_page=1`,
  );
  const [license] = found.licenses as { id: string }[];
  if (!license) throw new CliError(`no license has the id or serial ${typed}`);
  return license.id;
};

/**
 * `licenses`: issue, change, count and save licenses, and import or export them in bulk. Every
 * command that names one license takes its id or its serial.
 */
export function registerLicenseCommands(program: Command, io: CliIo): void {
  const licenses = commandGroup(program, io, 'licenses', 'Licenses');
  apiCommand(io, licenses.command('create').description('Issue a license'))
    .option('--product-id <id>', "the product (with --policy-id: the policy's by default)")
    .option('--policy-id <id>', 'the policy it follows')
    .addOption(
      new Option('--type <type>', 'the license type').choices([
        'perpetual',
        'subscription',
        'trial',
        'node_locked',
        'floating',
      ]),
    )
    .option('--customer-id <id>', 'your customer reference')
    .option('--customer-email <email>', "the customer's e-mail")
    .option('--features <features>', 'comma-separated features', csv)
    .option('--valid-days <days>', 'days of validity (0: perpetual)', integer)
    .option('--max-seats <seats>', 'machine seats', integer)
    .option('--max-uses <uses>', 'uses it may count (default: no limit)', integer)
    .option('--fingerprint <fingerprint>', 'bind it to one machine')
    .action(async (o: ApiOptions & Record<string, unknown>) => {
      const body = await callApi(io, o, 'POST', '/v1/licenses', licenseBody(o));
      print(io, o, body, () => table([pick(body, LICENSE_COLUMNS)]));
    });
  addList(io, licenses, 'licenses', 'licenses', '/v1/licenses', LICENSE_COLUMNS, (command) =>
    command
      .option('--product-id <id>', 'only this product')
      .option('--status <status>', 'only this status')
      .option('--customer-email <text>', 'e-mail contains'),
  );
  addGet(io, licenses, 'a license (by id or serial)', '/v1/licenses', LICENSE_COLUMNS, licenseId);
  apiCommand(io, licenses.command('update').description('Change a license (signed again)').argument('<id>'))
    .option('--customer-id <id>', 'your customer reference ("none" to clear)')
    .option('--customer-email <email>', 'the customer\'s e-mail ("none" to clear)')
    .option('--features <features>', 'comma-separated features (replaces them)', csv)
    .option('--max-seats <seats>', 'machine seats', integer)
    .option('--max-uses <uses>', 'uses it may count ("none": no limit)', optionalInteger)
    .option('--valid-until <time>', 'when it ends (ISO 8601; "none": never)')
    .option('--fingerprint <fingerprint>', 'bind it to one machine ("none" to unbind)')
    .action(async (typed: string, o: ApiOptions & Record<string, unknown>) => {
      const id = await licenseId(io, o, typed);
      const fingerprint = o['fingerprint'] as string | undefined;
      const body = await callApi(
        io,
        o,
        'PATCH',
        `/v1/licenses/${segment(id)}`,
        compact({
          customer_id: orNull(o['customerId']),
          customer_email: orNull(o['customerEmail']),
          features: o['features'],
          max_seats: o['maxSeats'],
          max_uses: orNull(o['maxUses']),
          valid_until: orNull(o['validUntil']),
          hardware_binding:
            fingerprint === undefined ? undefined : fingerprint === 'none' ? null : { fingerprint },
        }),
      );
      print(io, o, body, () => table([pick(body, LICENSE_COLUMNS)]));
    });
  addRemove(io, licenses, 'revoke', 'Revoke a license (cannot be undone)', '/v1/licenses', licenseId);
  for (const [name, status, description] of [
    ['suspend', 'suspended', 'Suspend a license'],
    ['reinstate', 'active', 'Reinstate a suspended license'],
  ] as const) {
    apiCommand(io, licenses.command(name).description(description).argument('<id>')).action(
      async (typed: string, o: ApiOptions) => {
        const id = await licenseId(io, o, typed);
        const body = await callApi(io, o, 'PATCH', `/v1/licenses/${segment(id)}`, { status });
        print(io, o, body, () => table([pick(body, LICENSE_COLUMNS)]));
      },
    );
  }
  for (const [name, method, description] of [
    ['entitle', 'POST', 'Attach entitlements to a license (by code)'],
    ['unentitle', 'DELETE', 'Detach entitlements from a license (by code)'],
  ] as const) {
    apiCommand(
      io,
      licenses.command(name).description(description).argument('<id>').argument('<codes...>'),
    ).action(async (typed: string, codes: string[], o: ApiOptions) => {
      const id = await licenseId(io, o, typed);
      const body = await callApi(io, o, method, `/v1/licenses/${segment(id)}/entitlements`, { codes });
      print(io, o, body, () => table([pick(body, ['id', 'serial', 'entitlements'])]));
    });
  }
  apiCommand(io, licenses.command('use').description('Count uses of a license').argument('<id>'))
    .option('--increment <n>', 'uses to add (default 1)', integer)
    .action(async (typed: string, o: ApiOptions & { increment?: number }) => {
      const id = await licenseId(io, o, typed);
      const body = await callApi(
        io,
        o,
        'POST',
        `/v1/licenses/${segment(id)}/usage`,
        compact({ increment: o.increment }),
      );
      print(io, o, body, () => table([pick(body, ['uses', 'max_uses'])]));
    });
  apiCommand(
    io,
    licenses.command('reset-usage').description("Reset a license's uses to 0").argument('<id>'),
  ).action(async (typed: string, o: ApiOptions) => {
    const id = await licenseId(io, o, typed);
    const body = await callApi(io, o, 'DELETE', `/v1/licenses/${segment(id)}/usage`);
    print(io, o, body, () => table([pick(body, ['uses', 'max_uses'])]));
  });
  apiCommand(io, licenses.command('download').description('Save the .lic file').argument('<id>'))
    .option('-o, --output <file>', 'where to write it (default: <SERIAL>.lic)')
    .action(async (typed: string, o: ApiOptions & { output?: string }) => {
      const id = await licenseId(io, o, typed);
      const body = await callApi(io, o, 'GET', `/v1/licenses/${segment(id)}`);
      const file = o.output ?? `${body.serial as string}.lic`;
      await writeFile(file, Buffer.from(body.license_blob as string, 'base64'));
      print(io, o, { file, serial: body.serial }, () => `${file}\n`);
    });
  apiCommand(
    io,
    licenses
      .command('checkout')
      .description('Save a license file that expires on its own, for offline use')
      .argument('<id>'),
  )
    .option(
      '--ttl <seconds>',
      "how long the file is valid (3600..31536000; default: the organization's)",
      integer,
    )
    .option('-o, --output <file>', 'where to write it (default: <SERIAL>.lic)')
    .action(async (typed: string, o: ApiOptions & { ttl?: number; output?: string }) => {
      const id = await licenseId(io, o, typed);
      const body = await callApi(
        io,
        o,
        'POST',
        `/v1/licenses/${segment(id)}/checkout`,
        compact({ ttl_seconds: o.ttl }),
      );
      const bytes = Buffer.from(body.license_blob as string, 'base64');
      // The answer carries no serial, so it is read from the file. The id stands in if that fails.
      const serial = decodeLicense(new Uint8Array(bytes))?.serial ?? typed;
      const file = o.output ?? `${serial}.lic`;
      await writeFile(file, bytes);
      const saved = { file, serial, issued_at: body.issued_at, expires_at: body.expires_at };
      print(io, o, saved, () => `${file} (expires ${body.expires_at as string})\n`);
    });
  addLicenseImport(io, licenses);
  addLicenseExport(io, licenses);
}

function licenseBody(o: Record<string, unknown>): Record<string, unknown> {
  return compact({
    product_id: o['productId'],
    policy_id: o['policyId'],
    license_type: o['type'],
    customer_id: o['customerId'],
    customer_email: o['customerEmail'],
    features: o['features'],
    valid_days: o['validDays'],
    max_seats: o['maxSeats'],
    max_uses: o['maxUses'],
    hardware_binding: o['fingerprint'] === undefined ? undefined : { fingerprint: o['fingerprint'] },
  });
}
