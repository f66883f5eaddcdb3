import 'reflect-metadata';
import { Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { DatabaseModule, ensureDatabase, migrate } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { GATEWAY_ENTITIES, GATEWAY_SCHEMA } from './app.module';
import { GATEWAY_CONFIG, GatewayConfig, loadGatewayConfig } from './config';
import { OrganizationsService } from './identity/organizations.service';
import { GATEWAY_MIGRATIONS } from './migrations';
import { OrganizationLimits, OrganizationLimitsService } from './rate-limits/organization-limits.service';
import { LIMIT_NAMES, Limit, LimitName, parseLimitChanges } from './rate-limits/rate-limits';

const USAGE =
  'usage: npm run cli -- org create "<name>"\n' +
  '       npm run cli -- org limits "<name or id>" [<admin|read|client|activations>=<requests>/<window>[s|m|h|d] | <name>=default ...]\n';

/** Operator commands; run through tools/cli.js. Answers the process exit code. */
export async function runCli(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  env: Record<string, string | undefined> = process.env,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const [noun, verb, name, ...rest] = argv;
  let limitChanges: Map<LimitName, Limit | null> | undefined;
  try {
    if (verb === 'limits') limitChanges = parseLimitChanges(rest);
  } catch (error) {
    err.write(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (noun !== 'org' || (verb !== 'create' && verb !== 'limits') || !name?.trim() || name.length > 255) {
    err.write(USAGE);
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
    if (limitChanges) {
      const limits = app.get(OrganizationLimitsService);
      const shown =
        limitChanges.size > 0
          ? await limits.update(name.trim(), limitChanges)
          : await limits.show(name.trim());
      out.write(describeLimits(shown, config));
      return 0;
    }
    const created = await app.get(OrganizationsService).create(name.trim());
    out.write(
      `Created organization "${created.name}" (${created.id}).\n` +
        `Admin API key (shown only this once):\n${created.adminKey.key}\n`,
    );
    return 0;
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
