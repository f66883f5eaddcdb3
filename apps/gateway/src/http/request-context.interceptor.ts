import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { requestContext } from '@licensing/shared/logging';

/**
 * Runs the handler inside the request's context: its logs, and every bus message it sends, carry
 * the request id and the caller's organization.
 */
@Injectable()
export class RequestContextInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const store = { request_id: request.id, org_id: request.auth?.orgId };
    return new Observable((subscriber) =>
      requestContext.run(store, () => next.handle().subscribe(subscriber)),
    );
  }
}
