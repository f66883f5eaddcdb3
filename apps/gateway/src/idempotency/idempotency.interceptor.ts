import { createHash } from 'node:crypto';
import {
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  SetMetadata,
  UseInterceptors,
  applyDecorators,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiHeader } from '@nestjs/swagger';
import { FastifyReply, FastifyRequest } from 'fastify';
import { Observable, catchError, concatMap, from, map, of, throwError } from 'rxjs';
import { DomainError } from '@licensing/shared/errors';
import { JsonText } from '@licensing/shared/messaging';
import { problemResponse } from '../http/api-problems';
import { AddRouteConfig } from '../http/route-config';
import { toProblem } from '../http/problem';
import { bearerKeyOf } from '../identity/authenticate.hook';
import { ReplayedHeaders } from './idempotency-key.entity';
import { IdempotencyService, OwnedClaim, StoredAnswer } from './idempotency.service';
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeyOf, requestHash } from './request-fingerprint';
import { sealFields, unsealFields } from './sealed-fields';

const SECRET_FIELDS = 'idempotency_secret_fields';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Set by `@Idempotent()`. On a `@Direct()` route, a request with an `Idempotency-Key` header is
     * left to Nest's pipeline, where this interceptor runs; one without the header is served directly.
     */
    idempotent?: boolean;
  }
}

/** Headers of a first answer that its replays repeat (content-type follows from the status). */
const REPLAYED_HEADERS = ['location', 'content-location'];

export interface IdempotentOptions {
  /**
   * Top-level members of the answer that are secrets shown only once (a new API key): stored
   * sealed under the caller's own API key, so only that key can have them replayed.
   */
  secretFields?: string[];
}

/**
 * Marks a route that creates something as safe to retry with an `Idempotency-Key` header, and
 * documents the header in the OpenAPI document. A new create route needs only this decorator
 * (with `secretFields` when its answer shows a secret once, as a webhook's `secret`).
 */
export function Idempotent(options: IdempotentOptions = {}): MethodDecorator {
  return applyDecorators(
    SetMetadata(SECRET_FIELDS, options.secretFields ?? []),
    UseInterceptors(IdempotencyInterceptor),
    AddRouteConfig({ idempotent: true }),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Makes the request safe to retry: 1 to 255 printable ASCII characters, a new one per operation. ' +
        "A repeat in the caller's organization within 24 h (by default) with the same JSON body answers " +
        'the first response again, same status and body, with `Idempotent-Replayed: true`.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
    }),
    problemResponse(
      409,
      [
        [
          'conflict',
          'the `Idempotency-Key` was used with another body or on another route, or its first request is still in progress',
        ],
      ],
      () => 'idempotency_key_conflict',
    ),
  );
}

/** `POST /v1/licenses`: the route template, one route for both URL prefixes. */
function routeOf(request: FastifyRequest): string {
  const template = request.routeOptions.url ?? request.url.split('?')[0];
  return `${request.method} ${template.replace(/^\/api(?=\/)/, '')}`;
}

/**
 * A handler that forwards the service's JSON text (`BusClient.forward`) answers here with the
 * value: what is stored, and what is sent.
 */
function parsedAnswer(body: unknown): unknown {
  return body instanceof JsonText ? (JSON.parse(body.text) as unknown) : body;
}

function headersToReplay(reply: FastifyReply): ReplayedHeaders {
  const headers: ReplayedHeaders = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/**
 * The key as stored. An API key's keys are its organization's (as the API promises); a license or
 * machine token's live in its license's own space, so that a shipped application can neither
 * replay an answer made for another license (or for an organization key) nor block one.
 */
function storedKeyOf(request: FastifyRequest, key: string): string {
  const reach = request.auth!.reach;
  if (reach.kind === 'organization') return key;
  return `license:${createHash('sha256').update(`${reach.license_id}\n${key}`).digest('hex')}`;
}

/**
 * Makes a create route safe to retry with an `Idempotency-Key` header: the first request with a
 * key runs and its answer (2xx or 4xx) is stored; a repeat gets that answer again with
 * `Idempotent-Replayed: true`. A 5xx gives the key back, so that a retry runs again. Without the
 * header the route runs as it is, with no database round trip.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly reflector: Reflector,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const key = idempotencyKeyOf(request.headers[IDEMPOTENCY_KEY_HEADER]);
    // Without a key there is nothing to claim; a forwarded answer's text is sent as it came.
    if (key === undefined) return next.handle();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const orgId = request.auth!.orgId;
    const secretFields = this.reflector.get<string[] | undefined>(SECRET_FIELDS, context.getHandler()) ?? [];
    const callerKey = bearerKeyOf(request.headers.authorization) ?? '';
    const sealContext = `${orgId}\n${key}`;

    const claim = await this.idempotency.claim({
      orgId,
      key: storedKeyOf(request, key),
      route: routeOf(request),
      requestHash: requestHash(request.body),
    });
    if (claim.kind === 'replay') {
      const body = unsealFields(claim.body, secretFields, callerKey, sealContext);
      if (body === undefined) {
        throw DomainError.conflict(
          'The first response to this Idempotency-Key holds a secret that only the API key which sent it can see again',
        );
      }
      return of(this.replay(reply, claim, body));
    }
    return next.handle().pipe(
      map(parsedAnswer),
      concatMap(async (body: unknown) => {
        const stored = sealFields(body, secretFields, callerKey, sealContext);
        await this.idempotency.complete(claim, reply.statusCode, stored, headersToReplay(reply));
        return body;
      }),
      catchError((error: unknown) =>
        from(this.settleFailure(claim, error)).pipe(concatMap(() => throwError(() => error))),
      ),
    );
  }

  private replay(reply: FastifyReply, answer: StoredAnswer, body: unknown): unknown {
    void reply.status(answer.status).header('idempotent-replayed', 'true');
    for (const [name, value] of Object.entries(answer.headers)) void reply.header(name, value);
    if (answer.status >= 400) void reply.type('application/problem+json');
    return body;
  }

  /** A 4xx is the request's answer and is kept; a 5xx may be transient, so the key is given back. */
  private async settleFailure(claim: OwnedClaim, error: unknown): Promise<void> {
    const { problem } = toProblem(error);
    if (problem.status >= 500) await this.idempotency.release(claim);
    else await this.idempotency.complete(claim, problem.status, problem, {});
  }
}
