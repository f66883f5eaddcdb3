import { createWriteStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { Command, CommanderError, Option } from 'commander';
import { decodeLicense, verifyLicense, type PublicKeyInput } from '@licensing/license-verifier';
import { EXPORT_COLUMNS, IMPORT_COLUMNS, ImportRow, csvLine, readImport } from './bulk';

/** Where the CLI reads and writes: the process's, or a test's. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /** stderr is a terminal: long commands draw a progress bar there. */
  interactive?: boolean;
}

/** A failure with the one line to print and the exit code. */
class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

interface ApiOptions {
  url?: string;
  apiKey?: string;
  json?: boolean;
}

const DEFAULT_URL = 'http://localhost:3000';

/** Runs one command line (argv without `node licensing`) and resolves to its exit code. */
export async function runLicensingCli(argv: string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return error.exitCode;
    }
    if (error instanceof CliError) {
      io.stderr(`error: ${error.message}\n`);
      return error.exitCode;
    }
    io.stderr(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

function buildProgram(io: CliIo): Command {
  const program = new Command('licensing')
    .description(
      'Verify license files, and manage products, policies, licenses, entitlements, key pairs and API keys.',
    )
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');

  const api = (command: Command) =>
    command
      .addOption(new Option('--url <url>', 'the licensing API (env LICENSING_URL)'))
      .addOption(new Option('--api-key <key>', 'an API key (env LICENSING_API_KEY)'))
      .option('--json', 'print JSON for scripts instead of a table')
      .exitOverride()
      .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });

  const print = (options: ApiOptions, value: unknown, table: () => string) =>
    io.stdout(options.json ? `${JSON.stringify(value)}\n` : table());

  program
    .command('verify')
    .description('Verify a license file offline with the product public key')
    .argument('<file>', 'the .lic file (or a file holding its license_blob)')
    .requiredOption(
      '--public-key <file|url>',
      'the PEM or JWK, or the URL of GET /v1/products/:id/public-key',
    )
    .option('--product-id <id>', 'the product the license must be for')
    .option('--fingerprint <fingerprint>', "this machine's fingerprint")
    .option('--api-key <key>', 'sent when --public-key is a URL (env LICENSING_API_KEY)')
    .option('--json', 'print JSON')
    .exitOverride()
    .action(
      async (
        file: string,
        options: {
          publicKey: string;
          productId?: string;
          fingerprint?: string;
          apiKey?: string;
          json?: boolean;
        },
      ) => {
        const license = await readFile(file).catch(() => {
          throw new CliError(`cannot read ${file}`);
        });
        const key = await publicKeyFrom(options.publicKey, options.apiKey ?? io.env['LICENSING_API_KEY']);
        const result = await verifyLicense(new Uint8Array(license), key, {
          productId: options.productId,
          fingerprint: options.fingerprint,
        }).catch((error: unknown) => {
          throw new CliError(error instanceof Error ? error.message : String(error));
        });
        const { claims: _claims, ...summary } = result.license ?? { claims: undefined };
        print(options, { ...result, license: result.license && summary }, () =>
          result.valid
            ? `valid: ${result.license!.serial} (${result.license!.product_code}, ${result.license!.valid_until ?? 'perpetual'})\n`
            : `invalid: ${result.errors.map((e) => `${e.code} (${e.message})`).join(', ')}\n`,
        );
        if (!result.valid) throw new CommanderError(1, 'licensing.invalid', 'invalid');
      },
    );

  program
    .command('inspect')
    .description('Show what a license file holds, without verifying it')
    .argument('<file>', 'the .lic file')
    .option('--json', 'print JSON')
    .exitOverride()
    .action(async (file: string, options: { json?: boolean }) => {
      const license = decodeLicense(new Uint8Array(await readFile(file)));
      if (!license) throw new CliError(`${file} is not a license file`);
      const { claims: _claims, ...summary } = license;
      print(options, summary, () =>
        table([Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, v]))], true),
      );
    });

  const resource = (name: string, description: string) =>
    program
      .command(name)
      .description(description)
      .exitOverride()
      .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });

  const keyPairs = resource('key-pairs', 'Signing key pairs');
  api(keyPairs.command('create').description('Generate a key pair'))
    .option('--name <name>', 'a name')
    .addOption(
      new Option('--algorithm <algorithm>', 'the key type').choices(['ed25519', 'ecdsa-p256', 'rsa-3072']),
    )
    .action(async (o: ApiOptions & { name?: string; algorithm?: string }) => {
      const body = await call(
        io,
        o,
        'POST',
        '/v1/key-pairs',
        compact({ name: o.name, algorithm: o.algorithm }),
      );
      print(o, body, () => table([pick(body, ['id', 'name', 'algorithm', 'fingerprint'])]));
    });
  list(keyPairs, 'key_pairs', '/v1/key-pairs', ['id', 'name', 'algorithm', 'created_at']);

  const products = resource('products', 'Products');
  api(products.command('create').description('Create a product'))
    .requiredOption('--name <name>', 'its name')
    .requiredOption('--code <code>', 'its code (lowercase, dashes)')
    .option('--key-pair-id <id>', 'the key pair that signs its licenses')
    .option('--description <text>', 'a description')
    .option('--default-valid-days <days>', 'validity of new licenses (0: perpetual)', integer)
    .option('--default-features <features>', 'comma-separated features of new licenses', csv)
    .action(async (o: ApiOptions & Record<string, unknown>) => {
      const body = await call(io, o, 'POST', '/v1/products', productBody(o, true));
      print(o, body, () => table([pick(body, PRODUCT_COLUMNS)]));
    });
  list(products, 'products', '/v1/products', PRODUCT_COLUMNS);
  get(products, '/v1/products', PRODUCT_COLUMNS);
  api(products.command('update').description('Change a product').argument('<id>'))
    .option('--key-pair-id <id>', 'the key pair that signs its licenses')
    .option('--description <text>', 'a description')
    .option('--default-valid-days <days>', 'validity of new licenses (0: perpetual)', integer)
    .option('--default-features <features>', 'comma-separated features of new licenses', csv)
    .action(async (id: string, o: ApiOptions & Record<string, unknown>) => {
      const body = await call(io, o, 'PUT', `/v1/products/${segment(id)}`, productBody(o, false));
      print(o, body, () => table([pick(body, PRODUCT_COLUMNS)]));
    });
  remove(products, 'delete', 'Delete a product', '/v1/products');

  const policies = resource('policies', "Policies: a product's licensing model");
  const policyOptions = (command: Command) =>
    command
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
      .addOption(
        new Option('--machine-matching <rule>', 'components that must match').choices(MATCHING_RULES),
      )
      .option('--max-uses <n>', "uses each license may count ('none': no limit)", optionalInteger)
      .addOption(
        new Option('--uses-reset <period>', "when uses go back to 0, UTC ('none': never)").choices(
          USES_RESET_PERIODS,
        ),
      )
      .option(
        '--entitlements <codes>',
        "comma-separated entitlement codes its licenses hold ('': none)",
        csv,
      );
  policyOptions(api(policies.command('create').description('Create a policy')))
    .requiredOption('--product-id <id>', 'the product')
    .requiredOption('--name <name>', 'its name')
    .action(async (o: ApiOptions & Record<string, unknown>) => {
      const body = await call(io, o, 'POST', '/v1/policies', policyBody(o, true));
      print(o, body, () => table([pick(body, POLICY_COLUMNS)]));
    });
  list(policies, 'policies', '/v1/policies', POLICY_COLUMNS, (command) =>
    command.option('--product-id <id>', 'only this product'),
  );
  get(policies, '/v1/policies', [
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
  policyOptions(api(policies.command('update').description('Change a policy').argument('<id>')))
    .option('--name <name>', 'its name')
    .action(async (id: string, o: ApiOptions & Record<string, unknown>) => {
      const body = await call(io, o, 'PATCH', `/v1/policies/${segment(id)}`, policyBody(o, false));
      print(o, body, () => table([pick(body, POLICY_COLUMNS)]));
    });
  remove(policies, 'delete', 'Delete a policy no license follows', '/v1/policies');

  const licenses = resource('licenses', 'Licenses');
  api(licenses.command('create').description('Issue a license'))
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
      const body = await call(io, o, 'POST', '/v1/licenses', licenseBody(o));
      print(o, body, () => table([pick(body, LICENSE_COLUMNS)]));
    });
  list(licenses, 'licenses', '/v1/licenses', LICENSE_COLUMNS, (command) =>
    command
      .option('--product-id <id>', 'only this product')
      .option('--status <status>', 'only this status')
      .option('--customer-email <text>', 'e-mail contains'),
  );
  get(licenses, '/v1/licenses', LICENSE_COLUMNS);
  remove(licenses, 'revoke', 'Revoke a license (cannot be undone)', '/v1/licenses');
  for (const [name, status, description] of [
    ['suspend', 'suspended', 'Suspend a license'],
    ['reinstate', 'active', 'Reinstate a suspended license'],
  ] as const) {
    api(licenses.command(name).description(description).argument('<id>')).action(
      async (id: string, o: ApiOptions) => {
        const body = await call(io, o, 'PATCH', `/v1/licenses/${segment(id)}`, { status });
        print(o, body, () => table([pick(body, LICENSE_COLUMNS)]));
      },
    );
  }
  for (const [name, method, description] of [
    ['entitle', 'POST', 'Attach entitlements to a license (by code)'],
    ['unentitle', 'DELETE', 'Detach entitlements from a license (by code)'],
  ] as const) {
    api(licenses.command(name).description(description).argument('<id>').argument('<codes...>')).action(
      async (id: string, codes: string[], o: ApiOptions) => {
        const body = await call(io, o, method, `/v1/licenses/${segment(id)}/entitlements`, { codes });
        print(o, body, () => table([pick(body, ['id', 'serial', 'entitlements'])]));
      },
    );
  }
  api(licenses.command('use').description('Count uses of a license').argument('<id>'))
    .option('--increment <n>', 'uses to add (default 1)', integer)
    .action(async (id: string, o: ApiOptions & { increment?: number }) => {
      const body = await call(
        io,
        o,
        'POST',
        `/v1/licenses/${segment(id)}/usage`,
        compact({ increment: o.increment }),
      );
      print(o, body, () => table([pick(body, ['uses', 'max_uses'])]));
    });
  api(licenses.command('reset-usage').description("Reset a license's uses to 0").argument('<id>')).action(
    async (id: string, o: ApiOptions) => {
      const body = await call(io, o, 'DELETE', `/v1/licenses/${segment(id)}/usage`);
      print(o, body, () => table([pick(body, ['uses', 'max_uses'])]));
    },
  );
  api(licenses.command('download').description('Save the .lic file').argument('<id>'))
    .option('-o, --output <file>', 'where to write it (default: <SERIAL>.lic)')
    .action(async (id: string, o: ApiOptions & { output?: string }) => {
      const body = await call(io, o, 'GET', `/v1/licenses/${segment(id)}`);
      const file = o.output ?? `${body.serial as string}.lic`;
      await writeFile(file, Buffer.from(body.license_blob as string, 'base64'));
      print(o, { file, serial: body.serial }, () => `${file}\n`);
    });
  api(
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
    .action(async (id: string, o: ApiOptions & { ttl?: number; output?: string }) => {
      const body = await call(
        io,
        o,
        'POST',
        `/v1/licenses/${segment(id)}/checkout`,
        compact({ ttl_seconds: o.ttl }),
      );
      const bytes = Buffer.from(body.license_blob as string, 'base64');
      const serial = decodeLicense(new Uint8Array(bytes))?.serial ?? id;
      const file = o.output ?? `${serial}.lic`;
      await writeFile(file, bytes);
      const saved = { file, serial, issued_at: body.issued_at, expires_at: body.expires_at };
      print(o, saved, () => `${file} (expires ${body.expires_at as string})\n`);
    });

  api(
    licenses
      .command('import')
      .description('Create licenses from a CSV file, each row once')
      .argument('<file>'),
  )
    .option('--concurrency <n>', 'requests in flight (1..16)', integer, 4)
    .addHelpText(
      'after',
      `\nColumns (a header row names them; only product_id is required): ${IMPORT_COLUMNS.join(', ')}.\n` +
        'features are separated by ";". Each row is sent with an Idempotency-Key made of its line and\n' +
        'content: importing the same file again, or re-running an interrupted import, creates nothing twice.\n',
    )
    .action(async (file: string, o: ApiOptions & { concurrency: number }) => {
      let rows: ImportRow[];
      try {
        rows = await readImport(file);
      } catch (error) {
        throw new CliError(
          `cannot import ${file}: ${error instanceof Error ? error.message : String(error)}`,
          2,
        );
      }
      const failed: { line: number; detail: string }[] = [];
      let done = 0;
      const progress = () => {
        if (!io.interactive) return;
        const width = 30;
        const filled = Math.round((done / Math.max(rows.length, 1)) * width);
        io.stderr(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${rows.length}`);
      };
      const queue = [...rows];
      const worker = async () => {
        for (let row = queue.shift(); row; row = queue.shift()) {
          await call(io, o, 'POST', '/v1/licenses', row.body, { 'idempotency-key': row.key }).catch(
            (error: unknown) => {
              failed.push({
                line: row!.line,
                detail: error instanceof Error ? error.message : String(error),
              });
            },
          );
          done += 1;
          progress();
        }
      };
      await Promise.all(Array.from({ length: Math.min(Math.max(o.concurrency, 1), 16) }, worker));
      if (io.interactive) io.stderr('\n');
      failed.sort((a, b) => a.line - b.line);
      const summary = { rows: rows.length, ok: rows.length - failed.length, failed };
      print(
        o,
        summary,
        () =>
          `${summary.ok} of ${summary.rows} rows imported\n` +
          failed.map(({ line, detail }) => `line ${line}: ${detail}\n`).join(''),
      );
      if (failed.length > 0) throw new CliError(`${failed.length} row(s) failed`);
    });
  api(licenses.command('export').description('Write every license, page by page, as CSV or JSON lines'))
    .addOption(new Option('--format <format>', 'csv or jsonl').choices(['csv', 'jsonl']).default('csv'))
    .option('-o, --output <file>', 'where to write (default: standard output)')
    .option('--product-id <id>', 'only this product')
    .option('--status <status>', 'only this status')
    .option('--customer-email <text>', 'e-mail contains')
    .action(
      async (o: ApiOptions & Record<string, unknown> & { format: 'csv' | 'jsonl'; output?: string }) => {
        const out = o.output ? createWriteStream(o.output) : undefined;
        const write = (text: string) => (out ? out.write(text) : io.stdout(text));
        if (o.format === 'csv') write(csvLine([...EXPORT_COLUMNS]));
        let written = 0;
        for (let page = 1; ; page++) {
          const query = new URLSearchParams({ page: String(page), per_page: '100' });
          for (const [option, parameter] of Object.entries(QUERY)) {
            if (o[option] !== undefined && option !== 'page' && option !== 'perPage')
              query.set(parameter, String(o[option]));
          }
          const body = await call(io, o, 'GET', `/v1/licenses?${query}`);
          const rows = body['licenses'] as Record<string, unknown>[];
          for (const row of rows) {
            write(
              o.format === 'csv'
                ? csvLine(EXPORT_COLUMNS.map((column) => row[column]))
                : `${JSON.stringify(row)}\n`,
            );
          }
          written += rows.length;
          if (rows.length === 0 || written >= (body['total'] as number)) break;
        }
        if (out) {
          await new Promise<void>((resolve, reject) =>
            out.end((error?: Error | null) => (error ? reject(error) : resolve())),
          );
          io.stderr(`${written} licenses written to ${o.output}\n`);
        }
      },
    );

  const entitlements = resource('entitlements', 'The entitlement catalog');
  api(entitlements.command('create').description('Add an entitlement to the catalog'))
    .requiredOption('--code <code>', 'its code (lowercase; parts joined by ".", "_" or "-"); immutable')
    .requiredOption('--name <name>', 'its name')
    .action(async (o: ApiOptions & { code: string; name: string }) => {
      const body = await call(io, o, 'POST', '/v1/entitlements', { code: o.code, name: o.name });
      print(o, body, () => table([pick(body, ENTITLEMENT_COLUMNS)]));
    });
  list(entitlements, 'entitlements', '/v1/entitlements', ENTITLEMENT_COLUMNS);
  get(entitlements, '/v1/entitlements', ENTITLEMENT_COLUMNS);
  api(
    entitlements.command('rename').description('Rename an entitlement').argument('<id>').argument('<name>'),
  ).action(async (id: string, name: string, o: ApiOptions) => {
    const body = await call(io, o, 'PATCH', `/v1/entitlements/${segment(id)}`, { name });
    print(o, body, () => table([pick(body, ENTITLEMENT_COLUMNS)]));
  });
  remove(entitlements, 'delete', 'Delete an entitlement that no license holds', '/v1/entitlements');

  const apiKeys = resource('api-keys', 'API keys');
  api(apiKeys.command('create').description('Issue an API key (shown once)'))
    .requiredOption('--name <name>', 'its name')
    .option('--scopes <scopes>', 'comma-separated: admin, read, client', csv, ['admin'])
    .action(async (o: ApiOptions & { name: string; scopes: string[] }) => {
      const body = await call(io, o, 'POST', '/v1/api-keys', { name: o.name, scopes: o.scopes });
      print(o, body, () => table([pick(body, ['id', 'name', 'scopes', 'key'])]));
    });
  list(apiKeys, 'api_keys', '/v1/api-keys', ['id', 'name', 'scopes', 'prefix', 'created_at']);
  remove(apiKeys, 'revoke', 'Revoke an API key', '/v1/api-keys');

  function list(parent: Command, plural: string, path: string, columns: string[], extra = (c: Command) => c) {
    extra(api(parent.command('list').description(`List ${parent.name()}`)))
      .option('--page <n>', 'page (from 1)', integer)
      .option('--per-page <n>', 'per page (1..100)', integer)
      .action(async (o: ApiOptions & Record<string, unknown>) => {
        const query = new URLSearchParams();
        for (const [option, parameter] of Object.entries(QUERY)) {
          if (o[option] !== undefined) query.set(parameter, String(o[option]));
        }
        const body = await call(io, o, 'GET', `${path}${query.size ? `?${query}` : ''}`);
        const rows = body[plural] as Record<string, unknown>[];
        print(
          o,
          body,
          () => `${table(rows.map((row) => pick(row, columns)))}${rows.length} of ${body.total as number}\n`,
        );
      });
  }

  function get(parent: Command, path: string, columns: string[]) {
    api(parent.command('get').description(`Show one of ${parent.name()}`).argument('<id>')).action(
      async (id: string, o: ApiOptions) => {
        const body = await call(io, o, 'GET', `${path}/${segment(id)}`);
        print(o, body, () => table([pick(body, columns)], true));
      },
    );
  }

  function remove(parent: Command, name: string, description: string, path: string) {
    api(parent.command(name).description(description).argument('<id>')).action(
      async (id: string, o: ApiOptions) => {
        const body = await call(io, o, 'DELETE', `${path}/${segment(id)}`);
        print(o, body, () => `${(body.message as string | undefined) ?? 'done'}\n`);
      },
    );
  }

  return program;
}

const PRODUCT_COLUMNS = ['id', 'code', 'name', 'key_pair_id', 'default_valid_days'];
const LICENSE_COLUMNS = ['id', 'serial', 'status', 'license_type', 'customer_email', 'valid_until'];
const ENTITLEMENT_COLUMNS = ['id', 'code', 'name', 'created_at'];
const QUERY: Record<string, string> = {
  page: 'page',
  perPage: 'per_page',
  productId: 'product_id',
  status: 'status',
  customerEmail: 'customer_email',
};

function productBody(o: Record<string, unknown>, create: boolean): Record<string, unknown> {
  return compact({
    ...(create ? { name: o['name'], code: o['code'] } : {}),
    key_pair_id: o['keyPairId'],
    description: o['description'],
    default_valid_days: o['defaultValidDays'],
    default_features: o['defaultFeatures'],
  });
}

const LICENSE_TYPES = ['perpetual', 'subscription', 'trial', 'node_locked', 'floating'];
const OVERAGE_RULES = ['none', '1.25x', '1.5x', '2x', 'always'];
const MATCHING_RULES = ['any', 'two', 'most', 'all'];
const USES_RESET_PERIODS = ['day', 'week', 'month', 'none'];
const POLICY_COLUMNS = ['id', 'name', 'product_id', 'license_type', 'duration_days', 'max_machines'];

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

async function call(
  io: CliIo,
  options: ApiOptions,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const url = (options.url ?? io.env['LICENSING_URL'] ?? DEFAULT_URL).replace(/\/+$/, '');
  const apiKey = options.apiKey ?? io.env['LICENSING_API_KEY'];
  if (!apiKey) throw new CliError('an API key is needed: --api-key or LICENSING_API_KEY', 2);
  let response: Response;
  try {
    response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new CliError(`cannot reach ${url}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    // A proxy's HTML error page, say: reported by status below.
  }
  if (!response.ok) {
    const detail = String(parsed['detail'] ?? parsed['title'] ?? `HTTP ${response.status}`);
    const errors = Array.isArray(parsed['errors'])
      ? (parsed['errors'] as { field: string; message: string }[])
      : [];
    throw new CliError(
      errors.length > 0 ? `${detail}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}` : detail,
    );
  }
  return parsed;
}

async function publicKeyFrom(source: string, apiKey: string | undefined): Promise<PublicKeyInput> {
  let text: string;
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(30_000),
    }).catch((error: unknown) => {
      throw new CliError(`cannot fetch ${source}: ${error instanceof Error ? error.message : String(error)}`);
    });
    text = await response.text();
    if (!response.ok) throw new CliError(`${source} answered ${response.status}`);
  } else {
    text = await readFile(source, 'utf8').catch(() => {
      throw new CliError(`cannot read ${source}`);
    });
  }
  if (text.trim().startsWith('{')) {
    const json = JSON.parse(text) as Record<string, unknown>;
    // GET /v1/products/:id/public-key answers the PEM inside JSON.
    return typeof json['public_key'] === 'string' ? json['public_key'] : (json as unknown as PublicKeyInput);
  }
  return text;
}

function table(rows: Record<string, unknown>[], vertical = false): string {
  const show = (value: unknown): string =>
    value === null || value === undefined
      ? ''
      : Array.isArray(value)
        ? value.join(',')
        : typeof value === 'object'
          ? JSON.stringify(value)
          : String(value);
  if (vertical) {
    return rows
      .map((row) => {
        const width = Math.max(...Object.keys(row).map((k) => k.length));
        return Object.entries(row)
          .map(([k, v]) => `${k.padEnd(width)}  ${show(v)}\n`)
          .join('');
      })
      .join('\n');
  }
  if (rows.length === 0) return '';
  const columns = Object.keys(rows[0]!);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((row) => show(row[c]).length)));
  const line = (cells: string[]) =>
    `${cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()}\n`;
  return (
    line(columns.map((c) => c.toUpperCase())) +
    rows.map((row) => line(columns.map((c) => show(row[c])))).join('')
  );
}

const pick = (value: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.map((k) => [k, value[k]]));
const compact = (value: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
const segment = (id: string) => encodeURIComponent(id);
const csv = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * An integer, or `none` for a limit switched off. Commander turns a parser's null into '', so the
 * word travels as is and `orNull` makes it null in the body.
 */
function optionalInteger(value: string): number | 'none' {
  return value === 'none' ? value : integer(value);
}

const orNull = (value: unknown) => (value === 'none' ? null : value);

function integer(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new CliError(`not an integer: ${value}`, 2);
  return n;
}
