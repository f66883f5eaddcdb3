import { INestApplicationContext } from '@nestjs/common';
import { GatewayConfig } from '../config';
import { KeysCommand, parseKeys, runKeys } from './keys';
import { OrgCommand, parseOrg, runOrg } from './org';
import { Help, RUN, Usage, helpOrUsage } from './usage';

/** Every operator command: what the arguments name, and how each one runs. */

export const MAIN_HELP =
  "Operator commands of the licensing platform. They use the gateway's settings (DATABASE_URL, ...).\n\n" +
  `usage: ${RUN} <command> [--help]\n\n` +
  '  org create "<name>"                     create an organization and print its first admin API key\n' +
  '  org limits "<name or id>" [<limit>...]  show or change the rate limits of an organization\n' +
  '  keys create --org "<name or id>"        print a new API key of an existing organization\n';

export type Command = OrgCommand | KeysCommand;

/** The command the arguments name, or help, or why they name none. */
export function parseCommand(argv: readonly string[]): Command | Help | Usage {
  const [noun, ...rest] = argv;
  if (noun === undefined) return { kind: 'usage', text: MAIN_HELP };
  if (noun === '--help' || noun === '-h' || noun === 'help') return { kind: 'help', text: MAIN_HELP };
  if (noun === 'org') return parseOrg(rest);
  if (noun === 'keys') return parseKeys(rest);
  return helpOrUsage(argv, MAIN_HELP);
}

/** Runs a command against the gateway's database; answers what to print. */
export function runCommand(
  command: Command,
  app: INestApplicationContext,
  config: GatewayConfig,
): Promise<string> {
  switch (command.kind) {
    case 'org-create':
    case 'org-limits':
      return runOrg(command, app, config);
    case 'keys-create':
      return runKeys(command, app);
  }
}
