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

interface OpenApiDocument {
  servers?: { url: string; variables?: Record<string, { enum?: string[]; default: string }> }[];
  paths: Record<string, Record<string, unknown> & { servers?: { url: string }[] }>;
}

/**
 * Every path the document's operations are served at: each path under every value of the root
 * server's variables (`/{prefix}` → `/api/v1/...` and `/v1/...`), or at the root for a path whose
 * own server is `/` (the probes).
 */
export function servedPaths(document: OpenApiDocument): { path: string; template: string }[] {
  const [server] = document.servers ?? [{ url: '' }];
  let bases = [server!.url];
  for (const [name, variable] of Object.entries(server!.variables ?? {})) {
    bases = bases.flatMap((base) =>
      (variable.enum ?? [variable.default]).map((value) => base.replace(`{${name}}`, value)),
    );
  }
  return Object.entries(document.paths).flatMap(([template, item]) =>
    (item.servers?.map((own) => own.url) ?? bases).map((base) => ({
      path: `${base.replace(/\/+$/, '')}${template}`,
      template,
    })),
  );
}

/** Every route of the OpenAPI document that the running gateway serves at GET /openapi.json. */
export async function openApiRoutes(anonymous: ApiClient): Promise<RouteKey[]> {
  const response = await anonymous.get('/openapi.json');
  expect(response.status).toBe(200);
  const document = response.body as OpenApiDocument;
  const routes: RouteKey[] = [];
  for (const { path, template } of servedPaths(document)) {
    const item = document.paths[template]!;
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
