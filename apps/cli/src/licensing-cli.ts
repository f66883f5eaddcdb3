import { Command, CommanderError } from 'commander';
import { CliError, type CliIo } from './cli-io';
import { registerActivationCommands } from './commands/activations';
import { registerApiKeyCommands } from './commands/api-keys';
import { registerEntitlementCommands } from './commands/entitlements';
import { registerKeyPairCommands } from './commands/key-pairs';
import { registerLicenseFileCommands } from './commands/license-files';
import { registerLicenseCommands } from './commands/licenses';
import { registerPolicyCommands } from './commands/policies';
import { registerProductCommands } from './commands/products';
import { registerRelayCommands } from './commands/relays';
import { registerWebhookCommands } from './commands/webhooks';

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

/** The `licensing` program. The help lists the groups in the order they are added. */
function buildProgram(io: CliIo): Command {
  const program = new Command('licensing')
    .description(
      'Verify license files, and manage products, policies, licenses, activations, entitlements, relays, webhooks, key pairs and API keys.',
    )
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
  registerLicenseFileCommands(program, io);
  registerKeyPairCommands(program, io);
  registerProductCommands(program, io);
  registerPolicyCommands(program, io);
  registerLicenseCommands(program, io);
  registerActivationCommands(program, io);
  registerEntitlementCommands(program, io);
  registerRelayCommands(program, io);
  registerWebhookCommands(program, io);
  registerApiKeyCommands(program, io);
  return program;
}
