import { HttpStatus, PipeTransform, RequestMethod, Type } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyReply, FastifyRequest } from 'fastify';
import { createValidationPipe } from '@licensing/shared/errors';
import { requestContext } from '@licensing/shared/logging';
import { JsonText } from '@licensing/shared/messaging';
import { inRequestSpan, tracing } from '@licensing/shared/tracing';
import { authorize } from '../identity/scopes';
import { OrganizationLimitsService } from '../rate-limits/organization-limits.service';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency/request-fingerprint';
import { ResponseKeysService } from '../signed-answers/response-keys.service';
import { SIGNATURE_HEADER, nonceOf, signAnswer } from '../signed-answers/signed-answer';
import { answerFailure } from './problem.filter';
import { contextOf } from './request-context.interceptor';
import { AddRouteConfig } from './route-config';

/** Where a parameter of a direct route comes from, and the pipes it goes through (as Nest would apply them). */
interface DirectParam {
  index: number;
  /** The body, or the named path parameter. */
  from: 'body' | 'param';
  name?: string;
  pipes: PipeTransform[];
  metatype: Type<unknown> | undefined;
}

/** A route served directly: its controller method and how its parameters are read. */
interface DirectTarget {
  controller: Type<unknown>;
  method: string;
  params: DirectParam[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by `@Direct()`: the preHandler of `registerDirectRoutes` serves the route. */
    direct?: DirectTarget;
  }
}

/**
 * Serves a hot route (check-revocation, sync, verify, validate, the GETs of one resource, license
 * create) from Fastify's preHandler, past Nest's router, guards, pipes, interceptors and rxjs, which
 * cost a third of the gateway's CPU on those routes (bench/README.md). The route stays a Nest route,
 * so the route table, its Fastify config and the OpenAPI document are unchanged, and it does what
 * the Nest pipeline does, with the same functions: authorization (`authorize`), the platform's
 * validation pipe, the request context, the controller method itself, its status (`@HttpCode`, else
 * 201 for a POST, as Nest answers), and failures answered by `answerFailure`. An `@Idempotent()`
 * route's request with an `Idempotency-Key` header goes through Nest's pipeline instead, where the
 * key is claimed and the answer stored. Only a method that takes nothing but its body and path
 * parameters can be direct; anything else fails when the class loads.
 */
export const Direct = (): MethodDecorator => (target, key, descriptor) => {
  const controller = target.constructor as Type<unknown>;
  const metadata = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, key) ?? {}) as Record<
    string,
    { index: number; data?: unknown; pipes?: PipeTransform[] }
  >;
  const types = (Reflect.getMetadata('design:paramtypes', target, key) ?? []) as Type<unknown>[];
  const params = Object.entries(metadata).map(([slot, { index, data, pipes = [] }]): DirectParam => {
    const [kind] = slot.split(':');
    if (kind === String(RouteParamtypes.BODY) && data === undefined) {
      return { index, from: 'body', pipes, metatype: types[index] };
    }
    if (kind === String(RouteParamtypes.PARAM) && typeof data === 'string') {
      return { index, from: 'param', name: data, pipes, metatype: types[index] };
    }
    throw new Error(
      `@Direct() ${controller.name}.${String(key)} may take only its @Body() and @Param(name)s`,
    );
  });
  AddRouteConfig({ direct: { controller, method: String(key), params } })(target, key, descriptor);
};

/**
 * Adds the preHandler that serves `@Direct()` routes. Registered after every other preHandler
 * (the per-license rate limit), so a direct route has been through all of them when it runs.
 */
export function registerDirectRoutes(app: NestFastifyApplication): void {
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
  const argumentsOf = async (request: FastifyRequest, params: DirectParam[]): Promise<unknown[]> => {
    const args: unknown[] = [];
    for (const { index, from, name, pipes, metatype } of params) {
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
        // A signed answer is asked for with a nonce: checked, and the key found, before the handler
        // runs, so a bad nonce or a missing key leaves no effect (a sync stores its report).
        const nonce = config.signed_answer ? nonceOf(request.headers['licensing-nonce']) : undefined;
        const orgId = request.auth!.orgId;
        const signer =
          nonce === undefined
            ? undefined
            : (responseKeys.cached(orgId) ?? (await responseKeys.signer(orgId)));
        const args = await argumentsOf(request, target.params);
        const { call, status } = handlerOf(target);
        const store = contextOf(request);
        // Traced, the request's span is the active one for the bus requests the handler makes.
        const result = await (tracing.enabled
          ? inRequestSpan(request, () => requestContext.run(store, () => call(...args)))
          : requestContext.run(store, () => call(...args)));
        void reply.code(status);
        // A forwarded answer (`BusClient.forward`) is the service's JSON text, sent as it came.
        const forwarded = result instanceof JsonText;
        if (!signer && !forwarded) return reply.send(result);
        // Serialized here, as Fastify would serialize the object, so the signature covers the bytes sent.
        const body = forwarded ? result.text : JSON.stringify(result);
        if (signer) void reply.header(SIGNATURE_HEADER, signAnswer(body, signer, nonce!, new Date()));
        return reply.type('application/json; charset=utf-8').send(body);
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
