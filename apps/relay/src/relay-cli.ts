// The `licensing-relay` command line: init, start, revocations import, report export, status.
import { readFile, writeFile } from 'node:fs/promises';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { ProductKeyError, readProductKey } from './relay-file/product-key';
import { RelayFileError } from './relay-file/relay-file';
import { initRelay, relayRequestOf, RelayUsageError, startRelay } from './relay';
import { exportReport, ReportError } from './reports/relay-report';
import { importRevocationList, RevocationImportError } from './revocations/revocations';
import { LeaseBook } from './leases/lease-book';
import { RelayStore, StoreError } from './store/relay-store';

/** Where the command reads and writes: the process's, or a test's. */
export interface RelayCliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Resolves when the process is asked to stop (SIGTERM, SIGINT): `start` then closes the relay. */
  stopped: () => Promise<void>;
}

/** Runs one command line (argv without `node licensing-relay`) and resolves to its exit code. */
export async function runRelayCli(argv: string[], io: RelayCliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof RelayFileError) {
      io.stderr(`error: relay file refused: ${error.code} (${error.message})\n`);
    } else if (error instanceof RevocationImportError) {
      io.stderr(`error: revocation list refused: ${error.code} (${error.message})\n`);
    } else if (
      error instanceof RelayUsageError ||
      error instanceof StoreError ||
      error instanceof ProductKeyError ||
      error instanceof ReportError
    ) {
      io.stderr(`error: ${error.message}\n`);
    } else {
      io.stderr(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    return 1;
  }
}

function buildProgram(io: RelayCliIo): Command {
  const program = new Command('licensing-relay')
    .description(
      'An on-premise relay: leases the floating seats of one license to machines on a network with no internet.',
    )
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');

  program
    .command('init')
    .description("Create the relay's database and key pair, and write the relay request for the vendor")
    .requiredOption('--data <dir>', 'the data directory (relay.db is created in it)')
    .requiredOption('--site <name>', 'the name of this site, 1 to 200 printable characters')
    .option('--out <file>', 'write the relay request to this file (default: stdout)')
    .exitOverride()
    .action(async (options: { data: string; site: string; out?: string }) => {
      const request = await initRelay(options.data, options.site);
      const text = `${JSON.stringify(request, null, 2)}\n`;
      if (options.out) {
        await writeFile(options.out, text);
        io.stderr(`relay request written to ${options.out}: send it to the vendor\n`);
      } else {
        io.stdout(text);
      }
    });

  program
    .command('request')
    .description('Print the relay request again (the site and public key the vendor issues relay files to)')
    .requiredOption('--data <dir>', 'the data directory')
    .exitOverride()
    .action(async (options: { data: string }) => {
      await withStore(options.data, async (store) => {
        io.stdout(`${JSON.stringify(relayRequestOf(store), null, 2)}\n`);
      });
    });

  program
    .command('start')
    .description('Serve the lease API (loads the relay file first when --file is given)')
    .requiredOption('--data <dir>', 'the data directory')
    .requiredOption('--public-key <file>', "the product's public key (PEM, JWK, or the public-key answer)")
    .option('--file <file>', 'a relay file to load, or to replace the one loaded')
    .option('--port <port>', 'the port to listen on', port, 8700)
    .option('--host <host>', 'the address to listen on', '127.0.0.1')
    .option(
      '--lease-ttl <seconds>',
      "a lease's lifetime when the relay file's policy sets none",
      seconds,
      600,
    )
    .option('--log-level <level>', 'fatal, error, warn, info, debug or silent', 'info')
    .exitOverride()
    .action(
      async (options: {
        data: string;
        publicKey: string;
        file?: string;
        port: number;
        host: string;
        leaseTtl: number;
        logLevel: string;
      }) => {
        const productKey = await readProductKey(options.publicKey);
        const relayFile = options.file === undefined ? undefined : await readText(options.file);
        const relay = await startRelay({
          dataDir: options.data,
          productKey,
          relayFile,
          port: options.port,
          host: options.host,
          leaseTtlSeconds: options.leaseTtl,
          logLevel: options.logLevel,
        });
        io.stdout(`licensing-relay listening on ${relay.url}\n`);
        await io.stopped();
        await relay.close();
      },
    );

  const revocations = program.command('revocations').description('The revocation list');
  revocations
    .command('import')
    .description("Import the product's signed revocation list (also while the relay runs)")
    .argument('<file>', 'the revocation list (GET /products/:id/revocation-list)')
    .requiredOption('--data <dir>', 'the data directory')
    .requiredOption('--public-key <file>', "the product's public key")
    .exitOverride()
    .action(async (file: string, options: { data: string; publicKey: string }) => {
      const productKey = await readProductKey(options.publicKey);
      const jws = await readText(file);
      await withStore(options.data, async (store) => {
        const now = Math.max(Date.now(), store.latestSeen());
        const result = await importRevocationList(jws, store, productKey, now);
        io.stdout(
          result.revoked
            ? `revocation list version ${result.version} imported: the license is revoked, ${result.leases_ended} lease(s) ended\n`
            : `revocation list version ${result.version} imported: the license is not revoked\n`,
        );
      });
    });

  const report = program.command('report').description('Usage reports for the vendor');
  report
    .command('export')
    .description('Write a signed report of the leases the relay has recorded')
    .requiredOption('--data <dir>', 'the data directory')
    .option('--out <file>', 'write the report to this file (default: stdout)')
    .option('--since <time>', 'only leases started at or after this ISO 8601 time', isoTime)
    .exitOverride()
    .action(async (options: { data: string; out?: string; since?: number }) => {
      await withStore(options.data, async (store) => {
        const exported = exportReport(store, Math.max(Date.now(), store.latestSeen()), options.since);
        if (options.out) await writeFile(options.out, `${exported.jws}\n`);
        else io.stdout(`${exported.jws}\n`);
        const count = exported.report.leases.length;
        io.stderr(`report ${exported.report.report_id}: ${count} lease(s)\n`);
        if (exported.next_since) {
          io.stderr(`more leases remain: export again with --since ${exported.next_since}\n`);
        }
      });
    });

  program
    .command('status')
    .description('Show the relay file, the seats in use and the revocation state, from the database')
    .requiredOption('--data <dir>', 'the data directory')
    .option('--json', 'print JSON')
    .exitOverride()
    .action(async (options: { data: string; json?: boolean }) => {
      await withStore(options.data, async (store) => {
        const identity = store.identity();
        if (!store.relayFile()) {
          const waiting = { site: identity.site, relay_file: null };
          io.stdout(
            options.json
              ? `${JSON.stringify(waiting)}\n`
              : `site: ${identity.site}\nrelay file: none loaded\n`,
          );
          return;
        }
        const { relay_file: _blob, ...status } = new LeaseBook(store, {
          leaseTtlSeconds: 600,
          clock: Date.now,
        }).status();
        const revocation = store.revocation();
        const summary = { ...status, revocation_list_version: revocation?.version ?? null };
        io.stdout(
          options.json
            ? `${JSON.stringify(summary)}\n`
            : Object.entries(summary)
                .map(([key, value]) => `${key}: ${value === null ? '-' : String(value)}`)
                .join('\n') + '\n',
        );
      });
    });

  return program;
}

async function withStore(dataDir: string, work: (store: RelayStore) => Promise<void>): Promise<void> {
  const store = RelayStore.open(dataDir);
  try {
    await work(store);
  } finally {
    store.close();
  }
}

async function readText(file: string): Promise<string> {
  return readFile(file, 'utf8').catch(() => {
    throw new RelayUsageError(`cannot read ${file}`);
  });
}

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError('a port is 0 to 65535');
  return n;
}

function seconds(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 31_536_000) {
    throw new InvalidArgumentError('1 to 31536000 seconds');
  }
  return n;
}

function isoTime(value: string): number {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) {
    throw new InvalidArgumentError('an ISO 8601 time, e.g. 2026-01-31T00:00:00Z');
  }
  return ms;
}
