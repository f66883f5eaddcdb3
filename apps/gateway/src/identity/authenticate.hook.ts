import { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '@licensing/shared/errors';
import { ApiKeysService } from './api-keys.service';

const PUBLIC_PATHS =
  /^\/((healthz|readyz|health\/(live|ready)|metrics|openapi\.(json|yaml)|docs|console)(\/|$|\?)|(\?|$))/;

/**
 * Paths served without an API key (the index `/`, probes, metrics, OpenAPI, docs, and the console's
 * static files, whose page then calls the API with the key it is given). ScopesGuard lets the same
 * paths through.
 */
export const isPublicPath = (url: string): boolean => PUBLIC_PATHS.test(url);

/** The API key of an `Authorization: Bearer <key>` header. */
export function bearerKeyOf(header: string | undefined): string | undefined {
  return header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
}

/** Resolves the request's API key into `request.auth`, or throws the `401`. */
export async function authenticate(request: FastifyRequest, apiKeys: ApiKeysService): Promise<void> {
  if (isPublicPath(request.url)) return;
  const key = bearerKeyOf(request.headers.authorization);
  if (!key) throw new DomainError('unauthorized', 'Send an API key as "Authorization: Bearer <key>"');
  const auth = await apiKeys.authenticate(key);
  if (!auth) throw new DomainError('unauthorized', 'The API key is unknown or has been revoked');
  request.auth = auth;
}

/**
 * Resolves the API key in Fastify's onRequest hook, before the body is even read, so that a
 * request with a bad key is a 401 whatever else is wrong with it (oversized, malformed JSON, ...).
 */
export function registerAuthentication(fastify: FastifyInstance, apiKeys: ApiKeysService): void {
  fastify.addHook('onRequest', (request) => authenticate(request, apiKeys));
}
