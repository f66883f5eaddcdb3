// The relay's HTTP server (Fastify): the lease API, answers signed with the relay's key, errors as
// the platform's problem answers. It keeps no state of its own: every request reads and writes the
// store, so what another process writes (a revocation import) counts on the next request.
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { LeaseBook } from '../leases/lease-book';
import { RelayError, type FieldError } from '../relay-error';
import { NONCE, NONCE_HEADER, SIGNATURE_HEADER, signAnswer, type AnswerSigner } from './signed-answer';

/** Request bodies over this are answered 413. */
export const BODY_LIMIT_BYTES = 16 * 1024;

const PRINTABLE = '^[^\\u0000-\\u001f\\u007f]*$';
const UUID = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/** The request schemas of the routes: Fastify validates with them, docs/relay-openapi.json states them. */
export const SCHEMAS = {
  leaseBody: {
    type: 'object',
    additionalProperties: false,
    required: ['fingerprint'],
    properties: {
      fingerprint: { type: 'string', minLength: 1, maxLength: 256, pattern: PRINTABLE },
      name: { type: ['string', 'null'], maxLength: 200, pattern: PRINTABLE },
    },
  },
  leaseParams: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: { type: 'string', pattern: UUID } },
  },
} as const;

export interface RelayServerOptions {
  book: LeaseBook;
  /** Returns the signer of the relay file in force. */
  signer: () => AnswerSigner;
  clock: () => number;
  logger: FastifyBaseLogger;
  /** Told of every route as it is added (the OpenAPI document's test lists them). */
  onRoute?: (route: { method: string | string[]; url: string; schema?: unknown }) => void;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's 2xx answers carry Licensing-Signature. */
    signed?: boolean;
  }
  interface FastifyRequest {
    nonce?: string;
  }
}

export function createRelayServer({
  book,
  signer,
  clock,
  logger,
  onRoute,
}: RelayServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger,
    bodyLimit: BODY_LIMIT_BYTES,
    // Node refuses a request line and headers over 16 KiB itself (431).
    routerOptions: { maxParamLength: 200 },
    return503OnClosing: true,
    ajv: {
      // Unknown fields and wrong types are refused, never dropped or coerced.
      customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: true },
    },
  });

  if (onRoute) app.addHook('onRoute', (route) => onRoute(route));

  app.addHook('onRequest', async (request) => {
    const nonce = request.headers[NONCE_HEADER];
    if (nonce === undefined) return;
    if (typeof nonce !== 'string' || !NONCE.test(nonce)) {
      throw new RelayError('validation_failed', 'Licensing-Nonce is malformed', [
        {
          field: 'Licensing-Nonce',
          message: 'Licensing-Nonce is 8 to 128 characters of A-Z a-z 0-9 . _ ~ + / = -',
        },
      ]);
    }
    request.nonce = nonce;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.routeOptions.config.signed || reply.statusCode < 200 || reply.statusCode > 299) return payload;
    const body = payload === null || payload === undefined ? '' : payload;
    if (typeof body !== 'string' && !Buffer.isBuffer(body)) return payload;
    reply.header(SIGNATURE_HEADER, signAnswer(body, signer(), request.nonce, clock()));
    return payload;
  });

  app.setErrorHandler((error: FastifyError | RelayError, request, reply) => problem(error, request, reply));
  app.setNotFoundHandler((request, reply) =>
    send(reply, new RelayError('not_found', `${request.method} ${request.url.split('?')[0]} does not exist`)),
  );

  const signed = { signed: true };

  app.post<{ Body: { fingerprint: string; name?: string | null } }>(
    '/v1/leases',
    { schema: { body: SCHEMAS.leaseBody }, config: signed },
    async (request, reply) => {
      const { fingerprint, name } = request.body;
      wellFormed({ fingerprint, name });
      const { lease, created } = book.lease(fingerprint, name ?? null);
      return reply.code(created ? 201 : 200).send(lease);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/leases/:id/heartbeat',
    { schema: { params: SCHEMAS.leaseParams }, config: signed },
    async (request) => book.heartbeat(request.params.id),
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/leases/:id',
    { schema: { params: SCHEMAS.leaseParams }, config: signed },
    async (request, reply) => {
      book.release(request.params.id);
      return reply.code(204).send();
    },
  );

  app.get('/v1/leases', { config: signed }, async () => {
    const leases = book.list();
    return { leases, total: leases.length };
  });

  app.get('/v1/status', { config: signed }, async () => book.status());

  // For probes: answers while the process serves, whatever the relay file says.
  app.get('/healthz', async () => ({ status: 'ok' }));

  return app;
}

/** Refuses what SQLite could not store exactly: a lone UTF-16 surrogate. */
function wellFormed(fields: Record<string, string | null | undefined>): void {
  const errors: FieldError[] = Object.entries(fields)
    .filter(([, value]) => typeof value === 'string' && !value.isWellFormed())
    .map(([field]) => ({ field, message: `${field} holds a lone UTF-16 surrogate` }));
  if (errors.length > 0) throw new RelayError('validation_failed', 'The request is invalid', errors);
}

function problem(error: FastifyError | RelayError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof RelayError) return send(reply, error);
  if (error.validation) {
    const errors = error.validation.map((issue) => ({
      field: fieldOf(issue.instancePath, issue.params, error.validationContext),
      message: issue.message ?? 'is invalid',
    }));
    return send(reply, new RelayError('validation_failed', 'The request is invalid', errors));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return send(reply, new RelayError('payload_too_large', `The body is over ${BODY_LIMIT_BYTES} bytes`));
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return send(reply, new RelayError('validation_failed', 'The body is not application/json'));
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return send(reply, new RelayError('validation_failed', 'The body is not valid JSON'));
    default:
      break;
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return send(reply, new RelayError('validation_failed', error.message));
  }
  // The store's own guards (the seat trigger, one live lease per machine) catch what the rules
  // above should already have; they are answered as those rules would have been.
  if (/no_seats/.test(error.message)) return send(reply, new RelayError('no_seats', 'All seats are leased'));
  request.log.error({ err: error, url: request.url, method: request.method }, 'request failed');
  return send(reply, new RelayError('internal', 'An unexpected error occurred'));
}

function fieldOf(instancePath: string, params: Record<string, unknown>, context: string | undefined): string {
  const path = instancePath.replace(/^\//, '').replace(/\//g, '.');
  const extra =
    typeof params['additionalProperty'] === 'string'
      ? params['additionalProperty']
      : typeof params['missingProperty'] === 'string'
        ? params['missingProperty']
        : '';
  const field = [path, extra].filter(Boolean).join('.');
  return field || (context ?? 'body');
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

function send(reply: FastifyReply, error: RelayError) {
  if (error.code === 'clock_rewound') reply.header('retry-after', '60');
  return reply
    .code(error.status)
    .type('application/problem+json')
    .send({
      type: 'about:blank',
      title: TITLES[error.status] ?? 'Error',
      status: error.status,
      code: error.code,
      detail: error.message,
      ...(error.errors ? { errors: error.errors } : {}),
    });
}
