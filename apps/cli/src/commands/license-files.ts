import { readFile } from 'node:fs/promises';
import { Command, CommanderError } from 'commander';
import { decodeLicense, verifyLicense } from '@licensing/license-verifier';
import { publicKeyFrom } from '../api-client';
import { CliError, type CliIo } from '../cli-io';
import { print, table } from '../output';

/** `verify` and `inspect`: a license file, read offline. */
export function registerLicenseFileCommands(program: Command, io: CliIo): void {
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
        print(io, options, { ...result, license: result.license && summary }, () =>
          result.valid
            ? `valid: ${result.license!.serial} (${result.license!.product_code}, ${result.license!.valid_until ?? 'perpetual'})\n`
            : `invalid: ${result.errors.map((e) => `${e.code} (${e.message})`).join(', ')}\n`,
        );
        // Exit code 1 without an error line: the verdict above says why.
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
      print(io, options, summary, () =>
        table([Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, v]))], true),
      );
    });
}
