import 'reflect-metadata';
import { INestApplicationContext, Logger } from '@nestjs/common';
import { DomainError } from '@licensing/shared/errors';
import { loadGatewayConfig } from './config';
import { parseCommand, runCommand } from './cli/commands';
import { openCliContext } from './cli/context';

/**
 * Operator commands, run through tools/operator.js (`npm run operator`). Each command lives in cli/. Answers the exit
 * status: 0 done, 1 refused or failed, 2 the arguments name no command.
 */
export async function runCli(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  env: Record<string, string | undefined> = process.env,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const command = parseCommand(argv);
  if (command.kind === 'help') {
    out.write(command.text);
    return 0;
  }
  if (command.kind === 'usage') {
    err.write(`${command.message ? `${command.message}\n` : ''}${command.text}`);
    return 2;
  }
  const config = loadGatewayConfig(env);
  let app: INestApplicationContext | undefined;
  try {
    app = await openCliContext(config);
    out.write(await runCommand(command, app, config));
    return 0;
  } catch (error) {
    // A refusal (an unknown organization, a name taken) is the operator's to read; anything else is a bug.
    if (error instanceof DomainError) err.write(`${error.message}\n`);
    else new Logger('cli').error(error);
    return 1;
  } finally {
    await app?.close();
  }
}
