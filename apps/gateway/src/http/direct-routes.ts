import { Type } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyReply, FastifyRequest } from 'fastify';
import { createValidationPipe } from '@licensing/shared/errors';
import { requestContext } from '@licensing/shared/logging';
import { assertScopes } from '../identity/scopes';
import { answerFailure } from './problem.filter';
import { contextOf } from './request-context.interceptor';
import { AddRouteConfig } from './route-config';

/** A route served directly: its controller method and the class its body is validated with. */
interface DirectTarget {
  controller: Type<unknown>;
  method: string;
  body: Type<object>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by `@Direct()`: the preHandler of `registerDirectRoutes` serves the route. */
    direct?: DirectTarget;
  }
}

/**
 * Serves a hot route (check-revocation, sync, verify, validate) from Fastify's preHandler, past
 * Nest's router, guards, pipes, interceptors and rxjs, which cost a third of the gateway's CPU
 * on those routes (bench/README.md). The route stays a Nest route, so the route table, its Fastify
 * config and the OpenAPI document are unchanged, and it does what the Nest pipeline does, with
 * the same functions: scopes (`assertScopes`), the platform's validation pipe, the request context,
 * the controller method itself, and failures answered by `answerFailure`. Only a method that takes
 * nothing but its body can be direct; anything else fails when the class is loaded.
 */
export const Direct = (): MethodDecorator => (target, key, descriptor) => {
  const controller = target.constructor as Type<unknown>;
  const args = Object.keys(
    (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, key) ?? {}) as Record<string, unknown>,
  );
  if (args.length !== 1 || !args[0].startsWith(`${RouteParamtypes.BODY}:`)) {
    throw new Error(`@Direct() ${controller.name}.${String(key)} must take exactly its @Body()`);
  }
  const [body] = Reflect.getMetadata('design:paramtypes', target, key) as [Type<object>];
  AddRouteConfig({ direct: { controller, method: String(key), body } })(target, key, descriptor);
};

/**
 * Adds the preHandler that serves `@Direct()` routes. Registered after every other preHandler
 * (the per-license rate limit), so a direct route has been through all of them when it runs.
 */
export function registerDirectRoutes(app: NestFastifyApplication): void {
  const pipe = createValidationPipe();
  const handlers = new Map<DirectTarget, (body: object) => Promise<unknown>>();
  const handlerOf = (target: DirectTarget) => {
    let handler = handlers.get(target);
    if (!handler) {
      const controller = app.get(target.controller) as Record<string, (body: object) => Promise<unknown>>;
      handler = controller[target.method].bind(controller);
      handlers.set(target, handler);
    }
    return handler;
  };

  app
    .getHttpAdapter()
    .getInstance()
    .addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
      const config = request.routeOptions.config;
      const target = config?.direct;
      if (!target) return;
      try {
        assertScopes(request.auth, config.allowed_scopes);
        const body = (await pipe.transform(request.body ?? {}, {
          type: 'body',
          metatype: target.body,
        })) as object;
        const handler = handlerOf(target);
        const result = await requestContext.run(contextOf(request), () => handler(body));
        return reply.send(result);
      } catch (error) {
        answerFailure(request, reply, error);
        return reply;
      }
    });
}
