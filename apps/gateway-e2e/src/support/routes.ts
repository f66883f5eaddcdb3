import { INestApplication, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { ApiClient } from '@licensing/shared/testing';

/** One route as the server serves it: `GET /api/v1/products/{id}` (OpenAPI's path template syntax). */
export type RouteKey = string;

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;

const joinPath = (...parts: string[]): string =>
  `/${parts
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const asArray = (value: unknown): string[] =>
  Array.isArray(value) ? (value as string[]) : [typeof value === 'string' ? value : '/'];

/**
 * Every route the gateway's Nest router maps, read from the same controller metadata the router
 * is built from, so a route that the OpenAPI document leaves out (an excluded endpoint) still shows.
 */
export function nestRoutes(app: INestApplication): RouteKey[] {
  const routes = new Set<RouteKey>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const prefixes = asArray(Reflect.getMetadata(PATH_METADATA, controller));
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        const paths = Reflect.getMetadata(PATH_METADATA, handler) as unknown;
        if (method === undefined || paths === undefined) continue;
        for (const prefix of prefixes) {
          for (const path of asArray(paths)) routes.add(`${RequestMethod[method]} ${joinPath(prefix, path)}`);
        }
      }
    }
  }
  return [...routes].sort();
}

/** Every route of the OpenAPI document that the running gateway serves at GET /openapi.json. */
export async function openApiRoutes(anonymous: ApiClient): Promise<RouteKey[]> {
  const response = await anonymous.get('/openapi.json');
  expect(response.status).toBe(200);
  const paths = response.body.paths as Record<string, Record<string, unknown>>;
  const routes: RouteKey[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of HTTP_METHODS) if (method in item) routes.push(`${method.toUpperCase()} ${path}`);
  }
  return routes.sort();
}

/** `GET /api/v1/products/{id}` → `GET /products/{id}`: the route as the matrices name it, without its prefix. */
export function withoutPrefix(route: RouteKey): { route: RouteKey; prefix: string } {
  const [method, path] = route.split(' ') as [string, string];
  const match = /^(\/api\/v1|\/v1)(\/.*)$/.exec(path);
  return match ? { route: `${method} ${match[2]}`, prefix: match[1]! } : { route, prefix: '' };
}
