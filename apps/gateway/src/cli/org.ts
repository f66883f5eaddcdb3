import { INestApplicationContext } from '@nestjs/common';
import { GatewayConfig } from '../config';
import { OrganizationLimits, OrganizationLimitsService } from '../identity/organization-limits.service';
import { CreatedOrganization, OrganizationsService } from '../identity/organizations.service';
import { LIMIT_NAMES, Limit, LimitName, parseLimitChanges } from '../identity/rate-limit-settings';
import { Help, RUN, Usage, helpOrUsage, wantsHelp } from './usage';

/** `org create` and `org limits`: organizations and their rate limits. */

const CREATE_USAGE = `${RUN} org create "<name>"`;
const LIMITS_USAGE = `${RUN} org limits "<name or id>" [<limit>...]`;

export const ORG_HELP = {
  org: `usage: ${CREATE_USAGE}\n       ${LIMITS_USAGE}\n`,
  create:
    `usage: ${CREATE_USAGE}\n\n` +
    'Creates an organization and prints its first admin API key. The key is shown only this once.\n' +
    'Names are unique.\n' +
    `To get another key later: ${RUN} keys create --org "<name>"\n`,
  limits:
    `usage: ${RUN} org limits "<name or id>" [<admin|read|client|activations>=<requests>/<window>[s|m|h|d] | <name>=default ...]\n\n` +
    "Without changes, prints the organization's rate limits.\n" +
    'client=900000/1m sets a limit. client=default drops it.\n' +
    'Running gateways apply a change within API_KEY_CACHE_TTL_MS.\n',
};

export type OrgCommand =
  | { kind: 'org-create'; name: string }
  | { kind: 'org-limits'; name: string; changes: Map<LimitName, Limit | null> };

/** The name, trimmed, if it can be one: not blank, at most 255 characters (the column's length). */
function organizationName(arg: string | undefined): string | undefined {
  const name = arg?.trim();
  return name && name.length <= 255 ? name : undefined;
}

/** The `org` command that the arguments after `org` name. */
export function parseOrg([verb, ...rest]: readonly string[]): OrgCommand | Help | Usage {
  if (verb === 'create') {
    if (wantsHelp(rest)) return { kind: 'help', text: ORG_HELP.create };
    const name = organizationName(rest[0]);
    if (name === undefined || rest.length > 1) return { kind: 'usage', text: ORG_HELP.create };
    return { kind: 'org-create', name };
  }
  if (verb === 'limits') {
    if (wantsHelp(rest)) return { kind: 'help', text: ORG_HELP.limits };
    const [arg, ...limits] = rest;
    const name = organizationName(arg);
    if (name === undefined) return { kind: 'usage', text: ORG_HELP.limits };
    try {
      return { kind: 'org-limits', name, changes: parseLimitChanges(limits) };
    } catch (error) {
      return { kind: 'usage', message: (error as Error).message, text: ORG_HELP.limits };
    }
  }
  return helpOrUsage([verb ?? '', ...rest], ORG_HELP.org);
}

/** Runs the command; answers what to print. */
export async function runOrg(
  command: OrgCommand,
  app: INestApplicationContext,
  config: GatewayConfig,
): Promise<string> {
  switch (command.kind) {
    case 'org-create':
      return describeCreatedOrganization(await app.get(OrganizationsService).create(command.name));
    case 'org-limits': {
      const limits = app.get(OrganizationLimitsService);
      const shown =
        command.changes.size > 0
          ? await limits.update(command.name, command.changes)
          : await limits.show(command.name);
      return describeLimits(shown, config.API_KEY_CACHE_TTL_MS);
    }
  }
}

export function describeCreatedOrganization(
  created: Pick<CreatedOrganization, 'id' | 'name'> & { adminKey: { key: string } },
): string {
  return (
    `Created organization "${created.name}" (${created.id}).\n` +
    `Admin API key (shown only this once):\n${created.adminKey.key}\n`
  );
}

/** One line per limit, saying whether it is the organization's own or the default. */
export function describeLimits(organization: OrganizationLimits, cacheTtlMs: number): string {
  const lines = LIMIT_NAMES.map((name) => {
    const { limit, window_seconds } = organization.effective[name];
    const per = name === 'activations' ? 'per license' : 'per API key';
    const source = organization.overrides?.[name] ? 'this organization' : 'default';
    return `  ${name.padEnd(12)} ${String(limit).padStart(8)} per ${window_seconds} s ${per} (${source})\n`;
  });
  return (
    `Rate limits of organization "${organization.name}" (${organization.id}):\n${lines.join('')}` +
    `Running gateways apply a change within ${cacheTtlMs} ms (API_KEY_CACHE_TTL_MS).\n`
  );
}
