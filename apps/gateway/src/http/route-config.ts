import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { FastifyContextConfig } from 'fastify';

/**
 * Adds to the Fastify config of a route (what `request.routeOptions.config` holds in every hook)
 * instead of replacing it as Nest's `@RouteConfig` does, so that several decorators can each
 * contribute. This is how Fastify hooks, which run before Nest's guards, learn about the route.
 */
export const AddRouteConfig =
  (config: FastifyContextConfig): MethodDecorator =>
  (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const current = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ??
      {}) as FastifyContextConfig;
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...current, ...config }, handler);
  };
