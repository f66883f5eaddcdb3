import { isIP } from 'node:net';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { RequestContext, requestContext } from '@licensing/shared/logging';
import { inRequestSpan } from '@licensing/shared/tracing';

/**
 * Runs the handler inside the request's context: its logs, and every bus message it sends, carry
 * the request id and the caller's organization; the changes it causes are audited under the
 * caller's API key and address (`request.ip`, which honours TRUST_PROXY). Traced, the request's
 * span is the active one, so the bus requests it makes are its children.
 */
@Injectable()
export class RequestContextInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const store = contextOf(request);
    return new Observable((subscriber) =>
      inRequestSpan(request, () => requestContext.run(store, () => next.handle().subscribe(subscriber))),
    );
  }
}

/** What the logs, bus messages and audit entries caused by `request` need to know about it. */
export function contextOf(request: FastifyRequest): RequestContext {
  const auth = request.auth;
  return {
    request_id: request.id,
    org_id: auth?.orgId,
    actor: auth && { api_key_id: auth.keyId, prefix: auth.prefix, name: auth.name },
    reach: auth?.reach,
    // Behind a proxy the address comes from X-Forwarded-For: keep it only if it is one.
    ip: isIP(request.ip) ? request.ip : undefined,
  };
}
