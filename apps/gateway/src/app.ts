import { randomUUID } from 'node:crypto';
import { IncomingMessage } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyInstance } from 'fastify';
import { DataSource } from 'typeorm';
import { ensureDatabase, migrate } from '@licensing/shared/database';
import { NestPinoLogger, createLogger } from '@licensing/shared/logging';
import { GATEWAY_SCHEMA, GatewayModule } from './app.module';
import { GatewayConfig } from './config';
import { ApiKeysService } from './identity/api-keys.service';
import { registerAuthentication } from './identity/authenticate.hook';
import { OrganizationsService } from './identity/organizations.service';
import { serveOpenApi } from './openapi';
import { registerRateLimits } from './rate-limits/rate-limit.hook';
import { RateLimitService } from './rate-limits/rate-limit.service';

const BODY_LIMIT = 1024 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Starts the HTTP edge: API-key authentication, validation, problem+json errors, request ids and
 * OpenAPI; everything else is forwarded over NATS.
 */
export async function startGateway(config: GatewayConfig): Promise<NestFastifyApplication> {
  if (config.DATABASE_AUTO_CREATE) await ensureDatabase(config.DATABASE_URL);
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT,
    trustProxy: config.TRUST_PROXY,
    // The caller's x-request-id is kept when it is a sane token, so one id follows a request end to end.
    genReqId: (request: IncomingMessage) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config), adapter, {
    logger: new NestPinoLogger(logger),
    abortOnError: false,
    bodyParser: false,
  });
  app.enableShutdownHooks();

  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  registerAuthentication(fastify, app.get(ApiKeysService));
  if (config.RATE_LIMIT_ENABLED) registerRateLimits(fastify, app.get(RateLimitService));
  acceptEmptyJsonBodies(fastify);
  serveOpenApi(app);

  await migrate(app.get(DataSource), GATEWAY_SCHEMA);
  await app.init();
  if (config.BOOTSTRAP_DEFAULT_ORG) await bootstrapDefaultOrganization(app.get(OrganizationsService));
  await app.listen(config.PORT, config.HOST);
  return app;
}

/** First boot in development: an organization to play with, and its admin key, printed once. */
async function bootstrapDefaultOrganization(organizations: OrganizationsService): Promise<void> {
  const created = await organizations.createIfMissing('default');
  if (!created) return;
  process.stdout.write(
    `\n  Created organization "default" (${created.id}).\n` +
      `  Its admin API key, shown only this once:\n\n    ${created.adminKey.key}\n\n` +
      `  export LICENSING_API_KEY=${created.adminKey.key}\n\n`,
  );
}

/**
 * Many HTTP clients send `Content-Type: application/json` on every request, DELETE and heartbeat
 * included, with no body. Fastify's JSON parser refuses an empty body; this one reads it as no
 * body, and keeps the default parser (with its prototype-poisoning protection) for everything else.
 */
function acceptEmptyJsonBodies(fastify: FastifyInstance): void {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: BODY_LIMIT },
    (request, body, done) => (body === '' ? done(null, undefined) : parseJson(request, body as string, done)),
  );
}
