import 'reflect-metadata';
import { Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { DatabaseModule, ensureDatabase, migrate } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { GATEWAY_ENTITIES, GATEWAY_SCHEMA } from './app.module';
import { loadGatewayConfig } from './config';
import { OrganizationsService } from './identity/organizations.service';
import { GATEWAY_MIGRATIONS } from './migrations';

const USAGE = 'usage: npm run cli -- org create "<name>"\n';

/** Operator commands; run through tools/cli.js. Answers the process exit code. */
export async function runCli(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  env: Record<string, string | undefined> = process.env,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const [noun, verb, name] = argv;
  if (noun !== 'org' || verb !== 'create' || !name?.trim() || name.length > 255) {
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
    providers: [OrganizationsService],
  })
  class CliModule {}

  const app = await NestFactory.createApplicationContext(CliModule, { logger: ['error'] });
  try {
    await migrate(app.get(DataSource), GATEWAY_SCHEMA);
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
