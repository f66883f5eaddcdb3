import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { isUUID } from 'class-validator';
import { DomainError } from '@licensing/shared/errors';
import { OrganizationLimitsService } from './organization-limits.service';
import { AuthContext, CredentialScope } from '../http/auth-context';
import { isPublicPath } from './authenticate.hook';

/** Runs `authorize` for every route that Nest serves (direct routes call it themselves). */
@Injectable()
export class ScopesGuard implements CanActivate {
  constructor(private readonly organizations: OrganizationLimitsService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // The Kubernetes probes (/health/live, /health/ready and their older names) are Nest routes that authentication skips on purpose.
    if (isPublicPath(request.url)) return true;
    await authorize(request, this.organizations);
    return true;
  }
}

/**
 * Whether the request's credential may make it, in this order: a credential at all (`401`), its
 * scopes (`403`), the license or product its path names (`404` outside a token's reach), and the
 * organization's switch for client keys (`403`).
 */
export async function authorize(
  request: FastifyRequest,
  organizations: OrganizationLimitsService,
): Promise<void> {
  const config = request.routeOptions.config;
  const auth = request.auth;
  assertScopes(auth, config?.allowed_scopes);
  if (config?.reach_param && auth?.license) {
    assertReach(auth.license, config.reach_param, (request.params as Record<string, string>)['id']);
  }
  if (config?.license_action && closedToClientKeys(auth!, config.license_action, request.body)) {
    const settings = await organizations.settingsOf(auth!.orgId);
    if (!settings.clientKeysLicenseActions) {
      throw new DomainError(
        'forbidden',
        'This organization lets only license and machine tokens act on a license ' +
          '(client_keys_license_actions is false)',
      );
    }
  }
}

/** Refuses a request without a credential, or whose credential has neither `admin` nor one of `allowed`. */
function assertScopes(auth: AuthContext | undefined, allowed: readonly CredentialScope[] = []): void {
  if (!auth) throw new DomainError('unauthorized', 'A valid API key or token is required');
  if (auth.scopes.includes('admin') || auth.scopes.some((scope) => allowed.includes(scope))) return;
  throw new DomainError(
    'forbidden',
    `This credential's scopes (${auth.scopes.join(', ')}) do not allow this operation`,
  );
}

/** A malformed id is left to the route's own validation (`400`). */
function assertReach(
  license: NonNullable<AuthContext['license']>,
  resource: 'license' | 'product',
  id: string | undefined,
): void {
  if (id === undefined || !isUUID(id, 'all')) return;
  if (resource === 'license' && id !== license.id) throw DomainError.notFound('License', id);
  if (resource === 'product' && id !== license.productId) throw DomainError.notFound('Product', id);
}

/** Whether the switch applies: a `client` key (not admin) on a license action. */
function closedToClientKeys(auth: AuthContext, when: 'always' | 'with_fingerprint', body: unknown): boolean {
  if (auth.reach.kind !== 'organization' || auth.scopes.includes('admin')) return false;
  if (when === 'always') return true;
  return (
    typeof body === 'object' && body !== null && (body as { fingerprint?: unknown }).fingerprint !== undefined
  );
}
