import { CredentialReach } from '@licensing/shared/logging';

/** The scopes an API key may hold. */
export const API_KEY_SCOPES = ['admin', 'read', 'client'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/**
 * What a credential may call. API keys hold `admin`, `read` or `client`; a license token holds
 * `license` (the routes that act on one license) and a machine token `machine` (one activation).
 */
export type CredentialScope = ApiKeyScope | 'license' | 'machine';

/** Who is calling: resolved from the credential before anything else about the request is looked at. */
export interface AuthContext {
  orgId: string;
  /** The API key's id, the license token's id, or a machine token's activation id. */
  keyId: string;
  /** The credential's prefix and name: how audit entries name what made a change. */
  prefix: string;
  name: string;
  scopes: CredentialScope[];
  /** What the credential reaches inside the organization; it travels with every bus request. */
  reach: CredentialReach;
  /** A license or machine token's license, for routes that name it (or its product) in the path. */
  license?: { id: string; serial: string; productId: string };
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
}
