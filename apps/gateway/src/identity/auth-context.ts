import { ApiKeyScope } from './api-key.entity';

/** Who is calling: resolved from the API key before anything else about the request is looked at. */
export interface AuthContext {
  orgId: string;
  keyId: string;
  scopes: ApiKeyScope[];
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
}
