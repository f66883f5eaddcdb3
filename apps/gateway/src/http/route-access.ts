import { applyDecorators } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { CredentialScope } from './auth-context';
import { AddRouteConfig } from './route-config';

/** The operation extension that lists the scopes an operation accepts (`admin` alone when absent). */
export const ALLOWED_SCOPES_EXTENSION = 'x-allowed-scopes';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's `@AllowScopes`: read by the guard, the direct routes and the rate limits. */
    allowed_scopes?: CredentialScope[];
    /** Set by `@ReachOf()`: the path's `:id` names a license or a product. */
    reach_param?: 'license' | 'product';
    /** Set by `@LicenseAction()`: a route that acts on one license, which an organization can close to client keys. */
    license_action?: 'always' | 'with_fingerprint';
  }
}

/**
 * Scopes allowed to call a route besides `admin`, which may call everything. A route without this
 * decorator is admin-only, so a forgotten decorator fails closed.
 */
export const AllowScopes = (...scopes: Exclude<CredentialScope, 'admin'>[]): MethodDecorator =>
  applyDecorators(
    AddRouteConfig({ allowed_scopes: scopes }),
    // The OpenAPI document states the scopes each operation accepts (openapi.ts reads this).
    ApiExtension(ALLOWED_SCOPES_EXTENSION, ['admin', ...scopes]),
  );

/**
 * The route's path `:id` names a license (or a product): a license or machine token reaches only
 * its own, and any other id is answered `404`, exactly as another organization's is.
 */
export const ReachOf = (resource: 'license' | 'product'): MethodDecorator =>
  AddRouteConfig({ reach_param: resource });

/**
 * A route that acts on one license (activations, heartbeats, sync; validate only `with_fingerprint`).
 * An organization that sets `client_keys_license_actions: false` closes it to `client` keys, so
 * that only license and machine tokens reach it.
 */
export const LicenseAction = (when: 'always' | 'with_fingerprint' = 'always'): MethodDecorator =>
  AddRouteConfig({ license_action: when });
