import { PipeTransform, Type } from '@nestjs/common';
import { RESPONSE_PASSTHROUGH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { AddRouteConfig } from './route-config';

/** Where a parameter of a direct route comes from, and the pipes it goes through (as Nest would apply them). */
export interface DirectParam {
  index: number;
  /** The body, the named path parameter, or the Fastify reply (`@Res({ passthrough: true })`). */
  from: 'body' | 'param' | 'reply';
  name?: string;
  pipes: PipeTransform[];
  metatype: Type<unknown> | undefined;
}

/** A route served directly: its controller method and how its parameters are read. */
export interface DirectTarget {
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
 * create, activation create and heartbeat) from Fastify's preHandler, past Nest's router, guards, pipes, interceptors and rxjs, which
 * cost a third of the gateway's CPU on those routes (bench/README.md). The route stays a Nest route,
 * so the route table, its Fastify config and the OpenAPI document are unchanged, and it does what
 * the Nest pipeline does, with the same functions: authorization (`authorize`), the platform's
 * validation pipe, the request context, the controller method itself, its status (`@HttpCode`, else
 * 201 for a POST, as Nest answers; a method that takes the reply with `@Res({ passthrough: true })`
 * may set another, as it may under Nest), and failures answered by `answerFailure`. An `@Idempotent()`
 * route's request with an `Idempotency-Key` header goes through Nest's pipeline instead, where the
 * key is claimed and the answer stored. Only a method that takes nothing but its body and path
 * parameters (and its reply, passed through) can be direct; anything else fails when the class loads. A method that declares
 * anything the preHandler would skip (a guard, an unknown interceptor, a `@Header()`) fails the
 * gateway's boot (`skippedByDirect` in edge/direct-routes.ts).
 */
export const Direct = (): MethodDecorator => (target, key, descriptor) => {
  const controller = target.constructor as Type<unknown>;
  const metadata = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, key) ?? {}) as Record<
    string,
    { index: number; data?: unknown; pipes?: PipeTransform[] }
  >;
  const types = (Reflect.getMetadata('design:paramtypes', target, key) ?? []) as Type<unknown>[];
  const passthrough = Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, controller, key) === true;
  const params = Object.entries(metadata).map(([slot, { index, data, pipes = [] }]): DirectParam => {
    const [kind] = slot.split(':');
    if (kind === String(RouteParamtypes.BODY) && data === undefined) {
      return { index, from: 'body', pipes, metatype: types[index] };
    }
    if (kind === String(RouteParamtypes.PARAM) && typeof data === 'string') {
      return { index, from: 'param', name: data, pipes, metatype: types[index] };
    }
    // Passed through only: the method sets the status, and the answer is still what it returns.
    if (kind === String(RouteParamtypes.RESPONSE) && passthrough) {
      return { index, from: 'reply', pipes: [], metatype: undefined };
    }
    throw new Error(
      `@Direct() ${controller.name}.${String(key)} may take only its @Body(), @Param(name)s and ` +
        '@Res({ passthrough: true })',
    );
  });
  AddRouteConfig({ direct: { controller, method: String(key), params } })(target, key, descriptor);
};
