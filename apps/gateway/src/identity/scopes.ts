import { CanActivate, ExecutionContext, Injectable, SetMetadata, applyDecorators } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiExtension } from '@nestjs/swagger';
import { FastifyRequest } from 'fastify';
import { DomainError } from '@licensing/shared/errors';
import { AddRouteConfig } from '../http/route-config';
import { ApiKeyScope } from './api-key.entity';
import { AuthContext } from './auth-context';
import { isPublicPath } from './authenticate.hook';

const ALLOWED_SCOPES = 'allowed_scopes';

/** The operation extension that lists the scopes an operation accepts (`admin` alone when absent). */
export const ALLOWED_SCOPES_EXTENSION = 'x-allowed-scopes';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's `@AllowScopes`, for the Fastify hooks that run before the guard (rate limits). */
    allowed_scopes?: ApiKeyScope[];
  }
}

/**
 * Scopes allowed to call a route besides `admin`, which may call everything. A route without this
 * decorator is admin-only, so a forgotten decorator fails closed.
 */
export const AllowScopes = (...scopes: Exclude<ApiKeyScope, 'admin'>[]): MethodDecorator =>
  applyDecorators(
    SetMetadata(ALLOWED_SCOPES, scopes),
    AddRouteConfig({ allowed_scopes: scopes }),
    // The OpenAPI document states the scopes each operation accepts (openapi.ts reads this).
    ApiExtension(ALLOWED_SCOPES_EXTENSION, ['admin', ...scopes]),
  );

@Injectable()
export class ScopesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // The Kubernetes probes (/health/live, /health/ready and their older names) are Nest routes that authentication skips on purpose.
    if (isPublicPath(request.url)) return true;
    assertScopes(
      request.auth,
      this.reflector.getAllAndOverride<ApiKeyScope[] | undefined>(ALLOWED_SCOPES, [
        context.getHandler(),
        context.getClass(),
      ]),
    );
    return true;
  }
}

/** Refuses a request without an API key, or whose key has neither `admin` nor one of `allowed`. */
export function assertScopes(auth: AuthContext | undefined, allowed: readonly ApiKeyScope[] = []): void {
  if (!auth) throw new DomainError('unauthorized', 'A valid API key is required');
  if (auth.scopes.includes('admin') || auth.scopes.some((scope) => allowed.includes(scope))) return;
  throw new DomainError(
    'forbidden',
    `This API key's scopes (${auth.scopes.join(', ')}) do not allow this operation`,
  );
}
