import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { DatabaseModule, ensureDatabase, migrate } from '@licensing/shared/database';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { GATEWAY_ENTITIES, GATEWAY_SCHEMA } from '../edge/app.module';
import { OrganizationLimitsService } from '../identity/organization-limits.service';
import { OrganizationsService } from '../identity/organizations.service';
import { GATEWAY_MIGRATIONS } from '../migrations';

/**
 * The services the commands use, on the gateway's database, with its migrations applied. The
 * caller closes it. No NATS and no Redis: an operator can fix an organization while they are down.
 */
export async function openCliContext(config: GatewayConfig): Promise<INestApplicationContext> {
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
    return app;
  } catch (error) {
    await app.close();
    throw error;
  }
}
