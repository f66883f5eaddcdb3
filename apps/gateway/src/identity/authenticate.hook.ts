import { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '@licensing/shared/errors';
import { ApiKeysService } from './api-keys.service';
import { TokensService } from './tokens.service';

/** What resolves a bearer credential: API keys (`lk_`) and license or machine tokens (`lt_`, `mt_`). */
export interface Authenticators {
  apiKeys: ApiKeysService;
  tokens: TokensService;
}

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

/** Resolves the request's credential into `request.auth`, or throws the `401`. */
export async function authenticate(
  request: FastifyRequest,
  { apiKeys, tokens }: Authenticators,
): Promise<void> {
  if (isPublicPath(request.url)) return;
  const key = bearerKeyOf(request.headers.authorization);
  if (!key) {
    throw new DomainError('unauthorized', 'Send an API key or token as "Authorization: Bearer <key>"');
  }
  const auth = TokensService.isToken(key) ? await tokens.authenticate(key) : await apiKeys.authenticate(key);
  if (!auth) throw new DomainError('unauthorized', 'The credential is unknown, expired or revoked');
  request.auth = auth;
}

/**
 * Resolves the API key in Fastify's onRequest hook, before the body is even read, so that a
 * request with a bad key is a 401 whatever else is wrong with it (oversized, malformed JSON, ...).
 */
export function registerAuthentication(fastify: FastifyInstance, authenticators: Authenticators): void {
  fastify.addHook('onRequest', (request) => authenticate(request, authenticators));
}
