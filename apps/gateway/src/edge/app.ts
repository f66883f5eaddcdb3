import { randomUUID } from 'node:crypto';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { ensureDatabase, migrate } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { NestPinoLogger, createLogger } from '@licensing/shared/logging';
import { JsonText, Readiness } from '@licensing/shared/messaging';
import { measureHttpRequests, serveMetrics } from '@licensing/shared/metrics';
import { traceHttpRequests } from '@licensing/shared/tracing';
import { GATEWAY_SCHEMA, GatewayModule } from './app.module';
import { GatewayConfig } from '../config';
import { answerClientError } from './client-errors';
import { serveConsole } from './console';
import { registerDirectRoutes } from './direct-routes';
import { closeGracefully } from './graceful-close';
import { registerIndexRoute } from './index-route';
import { drainOversizedBodies } from './oversized-bodies';
import { toProblem } from '../http/problem';
import { sendProblem } from './problem.filter';
import { assertWellFormed, decodeUtf8Body, findIllFormedInput } from './well-formed-input';
import { registerSecurityHeaders } from './security-headers';
import { ApiKeysService } from '../identity/api-keys.service';
import { Authenticators, authenticate, registerAuthentication } from '../identity/authenticate.hook';
import { TokensService } from '../identity/tokens.service';
import { OrganizationsService } from '../identity/organizations.service';
import { serveOpenApi } from './openapi';
import { registerRateLimits } from '../rate-limits/rate-limit.hook';
import { registerAnswerSignatures } from '../signed-answers/answer-signing';
import { RateLimitService } from '../rate-limits/rate-limit.service';

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
    // Requests arriving while the server closes are answered by closeGracefully, in problem+json.
    return503OnClosing: false,
    // A path whose percent-encoding is malformed never reaches a route or a hook: answer it here.
    // The API key is still checked first; `app` exists by the time a request arrives.
    frameworkErrors: (_error: Error, request: FastifyRequest, reply: FastifyReply) =>
      void answerUnroutable(request, reply, authenticatorsOf(app)),
    // What the HTTP parser refuses (headers over 16 KiB, not HTTP) is answered in problem+json too.
    clientErrorHandler: answerClientError,
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
  app.get(Readiness).setDrainDelay(config.READINESS_DRAIN_MS);

  const fastify = app.getHttpAdapter().getInstance();
  // First, so that a request's span covers authentication and rate limiting too.
  traceHttpRequests(fastify);
  fastify.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  closeGracefully(fastify, app.get(Readiness));
  measureHttpRequests(fastify);
  serveMetrics(fastify);
  registerSecurityHeaders(fastify);
  registerAuthentication(fastify, authenticatorsOf(app));
  if (config.RATE_LIMIT_ENABLED) registerRateLimits(fastify, app.get(RateLimitService));
  refuseIllFormedParameters(fastify);
  drainOversizedBodies(fastify, BODY_LIMIT);
  parseJsonBodies(fastify);
  sendForwardedAnswersAsTheyCame(fastify);
  registerAnswerSignatures(fastify);
  registerDirectRoutes(app, config.DIRECT_ROUTES);
  serveOpenApi(app);
  registerIndexRoute(fastify);
  await serveConsole(fastify);
  closeUnusedConnectionsOnClose(fastify);

  await migrate(app.get(DataSource), GATEWAY_SCHEMA);
  await app.init();
  if (config.BOOTSTRAP_DEFAULT_ORG) await bootstrapDefaultOrganization(app.get(OrganizationsService));
  await app.listen(config.PORT, config.HOST);
  return app;
}

/**
 * Node's server.close() waits for every connection that is not idle, and one that never sent a
 * request is not idle to Node: an HTTP client's spare connection (fetch opens one after a streamed
 * body is cut off) or a half-open socket would hold the shutdown until the headers timeout. Those
 * are closed with the idle ones; a connection with a request in flight is left to finish.
 */
function closeUnusedConnectionsOnClose(fastify: FastifyInstance): void {
  const unused = new Set<Socket>();
  fastify.server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  fastify.server.on('request', (request: IncomingMessage) => unused.delete(request.socket));
  fastify.addHook('preClose', async () => {
    for (const socket of unused) socket.destroy();
  });
}

/** First boot in development: an organization to play with, and its admin key, printed once. */
async function bootstrapDefaultOrganization(organizations: OrganizationsService): Promise<void> {
  const created = await organizations.createIfMissing('default');
  if (!created) return;
  process.stdout.write(
    `\n  Created organization "default" (${created.id}).\n` +
      `  Its admin API key, shown only this once:\n\n    ${created.adminKey.key}\n\n` +
      `  export LICENSING_API_KEY=${created.adminKey.key}\n\n` +
      `  Another admin key later: npm run operator -- keys create --org default\n\n`,
  );
}

const authenticatorsOf = (app: NestFastifyApplication): Authenticators => ({
  apiKeys: app.get(ApiKeysService),
  tokens: app.get(TokensService),
});

/**
 * A path Fastify cannot even decode (`/api/v1/products/%ZZ`): authentication first, as everywhere,
 * then a `400` in the API's problem format instead of Fastify's own.
 */
async function answerUnroutable(
  request: FastifyRequest,
  reply: FastifyReply,
  authenticators: Authenticators,
) {
  void reply.header('x-request-id', request.id);
  try {
    await authenticate(request, authenticators);
    throw DomainError.validation(
      [{ field: 'path', message: 'path holds a malformed percent-encoding' }],
      'The request path is malformed',
    );
  } catch (error) {
    sendProblem(reply, toProblem(error).problem);
  }
}

/**
 * A handler that forwards a service's answer (`BusClient.forward`) returns its JSON text, which is
 * sent as it came instead of being parsed and serialized again. Everything else is JSON.stringify'd,
 * as Fastify does by default.
 */
function sendForwardedAnswersAsTheyCame(fastify: FastifyInstance): void {
  fastify.setReplySerializer((payload: unknown) =>
    payload instanceof JsonText ? payload.text : JSON.stringify(payload),
  );
}

/**
 * Query strings and path parameters reach the services as strings: a NUL character (`%00`) in one
 * would be refused by PostgreSQL with a 500. Checked after authentication, before the body is read.
 */
function refuseIllFormedParameters(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (request) => {
    assertWellFormed(request.query);
    assertWellFormed(request.params);
  });
}

/**
 * JSON bodies: strict UTF-8 (invalid bytes are a 400, not silently replaced), Fastify's parser with
 * its prototype-poisoning protection, then a walk that refuses what no service could store (NUL,
 * lone surrogates) or validate (deep nesting), naming the field. Many HTTP clients send
 * `Content-Type: application/json` on every request, DELETE and heartbeat included, with no body:
 * an empty body reads as no body.
 */
function parseJsonBodies(fastify: FastifyInstance): void {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT },
    (request, body: Buffer, done) => {
      if (body.length === 0) return done(null, undefined);
      let text: string;
      try {
        text = decodeUtf8Body(body);
      } catch (error) {
        return done(error as Error, undefined);
      }
      void parseJson(request, text, (error, value: unknown) => {
        if (error) return done(error, undefined);
        const problem = findIllFormedInput(value);
        done(problem ? DomainError.validation([problem]) : null, problem ? undefined : value);
      });
    },
  );
}
