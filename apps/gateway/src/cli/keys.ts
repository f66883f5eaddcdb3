import { INestApplicationContext } from '@nestjs/common';
import { API_KEY_SCOPES, ApiKeyScope } from '../http/auth-context';
import { CreatedApiKeyView } from '../identity/api-key.dto';
import { OrganizationsService } from '../identity/organizations.service';
import { Help, RUN, Usage, helpOrUsage, wantsHelp } from './usage';

/** `keys create`: a new API key of an existing organization. */

const USAGE = `usage: ${RUN} keys create --org "<name or id>" [--scopes admin,read,client] [--name "<key name>"]\n`;

export const KEYS_HELP = {
  keys: USAGE,
  create:
    `${USAGE}\n` +
    'Prints a new API key of an existing organization. It is an admin key unless --scopes says otherwise.\n' +
    'The key is shown only this once.\n' +
    `To get a key again for the development organization: ${RUN} keys create --org default\n` +
    'A key made over the API (POST /api/v1/api-keys) needs a key already. This command does not.\n',
};

export interface KeysCommand {
  kind: 'keys-create';
  org: string;
  name: string;
  scopes: ApiKeyScope[];
}

const OPTIONS = ['--org', '--scopes', '--name'];
/** Key names are at most 100 characters (the column's length). */
const MAX_KEY_NAME = 100;

/** The `keys` command that the arguments after `keys` name. */
export function parseKeys([verb, ...rest]: readonly string[]): KeysCommand | Help | Usage {
  if (verb !== 'create') return helpOrUsage([verb ?? '', ...rest], KEYS_HELP.keys);
  if (wantsHelp(rest)) return { kind: 'help', text: KEYS_HELP.create };
  const usage = (message: string): Usage => ({ kind: 'usage', message, text: KEYS_HELP.create });

  const options = new Map<string, string>();
  for (let i = 0; i < rest.length; i += 2) {
    const [flag, value] = [rest[i]!, rest[i + 1]];
    if (!OPTIONS.includes(flag) || value === undefined) return usage(`unexpected argument "${flag}"`);
    options.set(flag, value);
  }
  const org = options.get('--org')?.trim();
  if (!org) return usage('--org is required');
  const scopes = (options.get('--scopes') ?? 'admin').split(',').map((scope) => scope.trim());
  const unknown = scopes.filter((scope) => !(API_KEY_SCOPES as readonly string[]).includes(scope));
  if (unknown.length > 0) return usage(`unknown scope "${unknown.join(', ')}"`);
  const name = options.get('--name')?.trim() || `${scopes.join('+')} (cli)`;
  return {
    kind: 'keys-create',
    org,
    name: name.slice(0, MAX_KEY_NAME),
    scopes: [...new Set(scopes)] as ApiKeyScope[],
  };
}

/** Runs the command; answers what to print. */
export async function runKeys(command: KeysCommand, app: INestApplicationContext): Promise<string> {
  const { organization, key } = await app
    .get(OrganizationsService)
    .issueKey(command.org, command.name, command.scopes);
  return describeNewKey(organization, key);
}

export function describeNewKey(
  organization: { id: string; name: string },
  key: Pick<CreatedApiKeyView, 'name' | 'scopes' | 'key'>,
): string {
  return (
    `New API key "${key.name}" (${key.scopes.join(', ')}) of organization "${organization.name}" ` +
    `(${organization.id}), shown only this once:\n${key.key}\n`
  );
}
