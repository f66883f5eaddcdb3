import 'reflect-metadata';
import { Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { DatabaseModule, ensureDatabase, migrate } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { GATEWAY_ENTITIES, GATEWAY_SCHEMA } from './edge/app.module';
import { GATEWAY_CONFIG, GatewayConfig, loadGatewayConfig } from './config';
import { OrganizationsService } from './identity/organizations.service';
import { GATEWAY_MIGRATIONS } from './migrations';
import { OrganizationLimits, OrganizationLimitsService } from './identity/organization-limits.service';
import { LIMIT_NAMES, Limit, LimitName, parseLimitChanges } from './identity/rate-limit-settings';
import { API_KEY_SCOPES, ApiKeyScope } from './http/auth-context';

const HELP = {
  main:
    "Operator commands of the licensing platform (they use the gateway's settings: DATABASE_URL, ...).\n\n" +
    'usage: npm run cli -- <command> [--help]\n\n' +
    '  org create "<name>"                     create an organization and print its first admin API key\n' +
    '  org limits "<name or id>" [<limit>...]  show or change an organization\'s rate limits\n' +
    '  keys create --org "<name or id>"        print a new API key of an existing organization\n',
  org: 'usage: npm run cli -- org create "<name>"\n       npm run cli -- org limits "<name or id>" [<limit>...]\n',
  orgCreate:
    'usage: npm run cli -- org create "<name>"\n\n' +
    'Creates an organization (names are unique) and prints its first admin API key, shown only this once.\n' +
    'Another key later: npm run cli -- keys create --org "<name>".\n',
  orgLimits:
    'usage: npm run cli -- org limits "<name or id>" [<admin|read|client|activations>=<requests>/<window>[s|m|h|d] | <name>=default ...]\n\n' +
    "Without changes, prints the organization's rate limits. client=900000/1m sets one; client=default drops it.\n" +
    'Running gateways apply a change within API_KEY_CACHE_TTL_MS.\n',
  keys: 'usage: npm run cli -- keys create --org "<name or id>" [--scopes admin,read,client] [--name "<key name>"]\n',
  keysCreate:
    'usage: npm run cli -- keys create --org "<name or id>" [--scopes admin,read,client] [--name "<key name>"]\n\n' +
    'Prints a new API key of an existing organization (by default an admin key), shown only this once:\n' +
    'how to get a key again for the development organization: npm run cli -- keys create --org default.\n' +
    'Keys made over the API (POST /api/v1/api-keys) need a key already; this one does not.\n',
};

const USAGE = HELP.main;
const SCOPES: readonly ApiKeyScope[] = API_KEY_SCOPES;

type Command =
  | { kind: 'help'; text: string }
  | { kind: 'usage'; message?: string; text: string }
  | { kind: 'org-create'; name: string }
  | { kind: 'org-limits'; name: string; changes: Map<LimitName, Limit | null> }
  | { kind: 'keys-create'; org: string; name: string; scopes: ApiKeyScope[] };

const wantsHelp = (args: string[]): boolean => args.some((arg) => arg === '--help' || arg === '-h');

/** The command the arguments name, or why they name none. */
export function parseCommand(argv: string[]): Command {
  const [noun, verb, ...rest] = argv;
  if (noun === undefined) return { kind: 'usage', text: USAGE };
  if (noun === '--help' || noun === '-h' || noun === 'help') return { kind: 'help', text: HELP.main };
  if (noun === 'org') {
    if (verb === 'create') {
      if (wantsHelp(rest)) return { kind: 'help', text: HELP.orgCreate };
      const name = rest[0]?.trim();
      if (!name || name.length > 255 || rest.length > 1) return { kind: 'usage', text: HELP.orgCreate };
      return { kind: 'org-create', name };
    }
    if (verb === 'limits') {
      if (wantsHelp(rest)) return { kind: 'help', text: HELP.orgLimits };
      const [name, ...limits] = rest;
      if (!name?.trim() || name.length > 255) return { kind: 'usage', text: HELP.orgLimits };
      try {
        return { kind: 'org-limits', name: name.trim(), changes: parseLimitChanges(limits) };
      } catch (error) {
        return { kind: 'usage', message: (error as Error).message, text: HELP.orgLimits };
      }
    }
    return wantsHelp([verb ?? '', ...rest])
      ? { kind: 'help', text: HELP.org }
      : { kind: 'usage', text: HELP.org };
  }
  if (noun === 'keys') {
    if (verb !== 'create') {
      return wantsHelp([verb ?? '', ...rest])
        ? { kind: 'help', text: HELP.keys }
        : { kind: 'usage', text: HELP.keys };
    }
    if (wantsHelp(rest)) return { kind: 'help', text: HELP.keysCreate };
    const options = new Map<string, string>();
    for (let i = 0; i < rest.length; i += 2) {
      const [flag, value] = [rest[i]!, rest[i + 1]];
      if (!['--org', '--scopes', '--name'].includes(flag) || value === undefined) {
        return { kind: 'usage', message: `unexpected argument "${flag}"`, text: HELP.keysCreate };
      }
      options.set(flag, value);
    }
    const org = options.get('--org')?.trim();
    const scopes = (options.get('--scopes') ?? 'admin').split(',').map((scope) => scope.trim());
    const unknown = scopes.filter((scope) => !SCOPES.includes(scope as ApiKeyScope));
    if (!org) return { kind: 'usage', message: '--org is required', text: HELP.keysCreate };
    if (unknown.length > 0 || scopes.length === 0) {
      return { kind: 'usage', message: `unknown scope "${unknown.join(', ')}"`, text: HELP.keysCreate };
    }
    const name = options.get('--name')?.trim() || `${scopes.join('+')} (cli)`;
    return {
      kind: 'keys-create',
      org,
      name: name.slice(0, 100),
      scopes: [...new Set(scopes)] as ApiKeyScope[],
    };
  }
  return wantsHelp(argv) ? { kind: 'help', text: HELP.main } : { kind: 'usage', text: USAGE };
}

/** Operator commands; run through tools/cli.js. Answers the process exit code. */
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
  if (config.DATABASE_AUTO_CREATE) await ensureDatabase(config.DATABASE_URL);

  @Module({
    imports: [
      DatabaseModule.forRoot({
        url: config.DATABASE_URL,
        schema: GATEWAY_SCHEMA,
        entities: GATEWAY_ENTITIES,
        migrations: GATEWAY_MIGRATIONS,
      }),
    ],
    providers: [
      OrganizationsService,
      OrganizationLimitsService,
      { provide: GATEWAY_CONFIG, useValue: config },
    ],
  })
  class CliModule {}

  const app = await NestFactory.createApplicationContext(CliModule, { logger: ['error'] });
  try {
    await migrate(app.get(DataSource), GATEWAY_SCHEMA);
    switch (command.kind) {
      case 'org-limits': {
        const limits = app.get(OrganizationLimitsService);
        const shown =
          command.changes.size > 0
            ? await limits.update(command.name, command.changes)
            : await limits.show(command.name);
        out.write(describeLimits(shown, config));
        return 0;
      }
      case 'org-create': {
        const created = await app.get(OrganizationsService).create(command.name);
        out.write(
          `Created organization "${created.name}" (${created.id}).\n` +
            `Admin API key (shown only this once):\n${created.adminKey.key}\n`,
        );
        return 0;
      }
      case 'keys-create': {
        const { organization, key } = await app
          .get(OrganizationsService)
          .issueKey(command.org, command.name, command.scopes);
        out.write(
          `New API key "${key.name}" (${key.scopes.join(', ')}) of organization "${organization.name}" ` +
            `(${organization.id}), shown only this once:\n${key.key}\n`,
        );
        return 0;
      }
    }
  } catch (error) {
    if (error instanceof DomainError) {
      err.write(`${error.message}\n`);
      return 1;
    }
    new Logger('cli').error(error);
    return 1;
  } finally {
    await app.close();
  }
}

function describeLimits(organization: OrganizationLimits, config: GatewayConfig): string {
  const lines = LIMIT_NAMES.map((name) => {
    const { limit, window_seconds } = organization.effective[name];
    const scope = name === 'activations' ? 'per license' : 'per API key';
    const source = organization.overrides?.[name] ? 'this organization' : 'default';
    return `  ${name.padEnd(12)} ${String(limit).padStart(8)} per ${window_seconds} s ${scope} (${source})\n`;
  });
  return (
    `Rate limits of organization "${organization.name}" (${organization.id}):\n${lines.join('')}` +
    `Running gateways apply a change within ${config.API_KEY_CACHE_TTL_MS} ms (API_KEY_CACHE_TTL_MS).\n`
  );
}
