import { HttpStatus, RequestMethod, Type } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HEADERS_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PIPES_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  SSE_METADATA,
} from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify';
import { createValidationPipe } from '@licensing/shared/errors';
import { requestContext } from '@licensing/shared/logging';
import { globalEnhancers } from '@licensing/shared/messaging';
import { inRequestSpan, tracing } from '@licensing/shared/tracing';
import { DirectParam, DirectTarget } from '../http/direct';
import { IdempotencyInterceptor } from '../idempotency/idempotency.interceptor';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency/request-fingerprint';
import { ScopesGuard, authorize } from '../identity/authorization';
import { OrganizationLimitsService } from '../identity/organization-limits.service';
import { SignedAnswerInterceptor, prepareSignedAnswer } from '../signed-answers/answer-signing';
import { ResponseKeysService } from '../signed-answers/response-keys.service';
import { ProblemFilter, answerFailure } from './problem.filter';
import { RequestContextInterceptor, contextOf } from './request-context.interceptor';

/**
 * The global enhancers whose work a direct route does itself, with the same functions: the guard
 * (`authorize`), the validation pipe, the request context (`contextOf`) and problem answers
 * (`answerFailure`). Any other global enhancer would be skipped, so it fails the boot.
 */
const GLOBAL_ENHANCERS_DONE: readonly Type[] = [
  ScopesGuard,
  createValidationPipe().constructor as Type,
  RequestContextInterceptor,
  ProblemFilter,
];

/**
 * The route interceptors a direct route honours: `@Idempotent()`'s, by leaving a request with an
 * `Idempotency-Key` to Nest's pipeline (without one the interceptor has nothing to do), and
 * `@SignedAnswer()`'s, whose `prepareSignedAnswer` it calls.
 */
const ROUTE_INTERCEPTORS_DONE: Partial<Record<keyof FastifyContextConfig, Type>> = {
  idempotent: IdempotencyInterceptor,
  signed_answer: SignedAnswerInterceptor,
};

/** What a controller or method may declare that the direct preHandler would not do: lists of enhancers. */
const ENHANCERS_NEVER_DONE = {
  [GUARDS_METADATA]: 'a guard',
  [PIPES_METADATA]: 'a method pipe',
  [EXCEPTION_FILTERS_METADATA]: 'an exception filter',
};

/** What a method may declare about its answer that the direct preHandler would not do. */
const ANSWER_SHAPERS_NEVER_DONE = {
  [HEADERS_METADATA]: 'a @Header()',
  [REDIRECT_METADATA]: 'a @Redirect()',
  [RENDER_METADATA]: 'a @Render()',
  [SSE_METADATA]: 'an @Sse()',
};

/**
 * What a `@Direct()` method declares, on itself or its controller, that the direct preHandler would
 * skip; empty when nothing is. `@Direct()` is an optimisation: it never changes what a route does.
 */
export function skippedByDirect(controller: Type, method: string): string[] {
  const handler = (controller.prototype as Record<string, object>)[method]!;
  const enhancers = (metadata: string): Type[] => [
    ...((Reflect.getMetadata(metadata, controller) as Type[] | undefined) ?? []),
    ...((Reflect.getMetadata(metadata, handler) as Type[] | undefined) ?? []),
  ];
  const skipped: string[] = [];
  for (const [metadata, what] of Object.entries(ENHANCERS_NEVER_DONE)) {
    if (enhancers(metadata).length > 0) skipped.push(what);
  }
  for (const [metadata, what] of Object.entries(ANSWER_SHAPERS_NEVER_DONE)) {
    const value: unknown = Reflect.getMetadata(metadata, handler);
    if (value !== undefined && !(Array.isArray(value) && value.length === 0)) skipped.push(what);
  }
  const config = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ?? {}) as FastifyContextConfig;
  const honoured = Object.entries(ROUTE_INTERCEPTORS_DONE)
    .filter(([flag]) => config[flag as keyof FastifyContextConfig])
    .map(([, interceptor]) => interceptor);
  for (const interceptor of enhancers(INTERCEPTORS_METADATA)) {
    if (!honoured.includes(interceptor)) skipped.push(`the interceptor ${interceptor.name}`);
  }
  return skipped;
}

/** Every `@Direct()` route of the application, and the global enhancers, checked: fails the boot on anything skipped. */
function assertDirectRoutesSkipNothing(app: NestFastifyApplication): void {
  const globals = globalEnhancers(app);
  const unknown = globals.filter(
    (enhancer) => !GLOBAL_ENHANCERS_DONE.some((done) => enhancer instanceof done),
  );
  if (unknown.length > 0) {
    throw new Error(
      `direct routes would skip the global ${unknown.map((e) => e.constructor.name).join(', ')}: ` +
        'teach edge/direct-routes.ts what it does, or drop @Direct()',
    );
  }
  for (const module of app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      const controller = metatype as Type | null;
      if (!controller) continue;
      for (const method of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[method];
        if (typeof handler !== 'function') continue;
        const route = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as
          FastifyContextConfig | undefined;
        if (!route?.direct) continue;
        const skipped = skippedByDirect(controller, method);
        if (skipped.length > 0) {
          throw new Error(
            `@Direct() ${controller.name}.${method} declares ${skipped.join(', ')}, ` +
              'which the direct preHandler would skip',
          );
        }
      }
    }
  }
}

/**
 * Adds the preHandler that serves `@Direct()` routes. Registered after every other preHandler
 * (the per-license rate limit), so a direct route has been through all of them when it runs.
 * Every direct route is checked first, whether they are on or off (`enabled`: DIRECT_ROUTES).
 * Off, Nest's pipeline serves every route; direct-routes.e2e-spec.ts proves both answer alike.
 */
export function registerDirectRoutes(app: NestFastifyApplication, enabled: boolean): void {
  assertDirectRoutesSkipNothing(app);
  if (!enabled) return;
  const validation = createValidationPipe();
  const responseKeys = app.get(ResponseKeysService);
  const organizations = app.get(OrganizationLimitsService);
  type Handler = { call: (...args: unknown[]) => Promise<unknown>; status: number };
  const handlers = new Map<DirectTarget, Handler>();
  const handlerOf = (target: DirectTarget) => {
    let handler = handlers.get(target);
    if (!handler) {
      const controller = app.get(target.controller) as Record<
        string,
        (...args: unknown[]) => Promise<unknown>
      >;
      const method = controller[target.method];
      handler = { call: method.bind(controller), status: statusOf(method) };
      handlers.set(target, handler);
    }
    return handler;
  };
  // Nest's order: the global validation pipe, then the parameter's own pipes.
  const argumentsOf = async (
    request: FastifyRequest,
    reply: FastifyReply,
    params: DirectParam[],
  ): Promise<unknown[]> => {
    const args: unknown[] = [];
    for (const { index, from, name, pipes, metatype } of params) {
      if (from === 'reply') {
        args[index] = reply;
        continue;
      }
      const raw = from === 'body' ? (request.body ?? {}) : (request.params as Record<string, string>)[name!];
      const metadata = { type: from, metatype, data: name } as const;
      let value: unknown = await validation.transform(raw, metadata);
      for (const pipe of pipes) value = await pipe.transform(value, metadata);
      args[index] = value;
    }
    return args;
  };

  app
    .getHttpAdapter()
    .getInstance()
    .addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
      const config = request.routeOptions.config;
      const target = config?.direct;
      if (!target) return;
      if (config.idempotent && request.headers[IDEMPOTENCY_KEY_HEADER] !== undefined) return;
      try {
        await authorize(request, organizations);
        if (config.signed_answer) await prepareSignedAnswer(request, responseKeys);
        const args = await argumentsOf(request, reply, target.params);
        const { call, status } = handlerOf(target);
        const store = contextOf(request);
        // Set before the call, as Nest does, so that a method given the reply may answer another.
        void reply.code(status);
        // Traced, the request's span is the active one for the bus requests the handler makes.
        const result = await (tracing.enabled
          ? inRequestSpan(request, () => requestContext.run(store, () => call(...args)))
          : requestContext.run(store, () => call(...args)));
        // The reply serializer sends a forwarded answer's JSON text as it came; `onSend` signs it.
        return reply.send(result);
      } catch (error) {
        answerFailure(request, reply, error);
        return reply;
      }
    });
}

/** The status Nest would answer a method's success with: its `@HttpCode`, else 201 for a POST, else 200. */
function statusOf(method: object): number {
  const declared = Reflect.getMetadata(HTTP_CODE_METADATA, method) as number | undefined;
  if (declared !== undefined) return declared;
  const verb = Reflect.getMetadata(METHOD_METADATA, method) as RequestMethod | undefined;
  return verb === RequestMethod.POST ? HttpStatus.CREATED : HttpStatus.OK;
}
