import { ApiKeyScope } from './api-key.entity';

/** Who is calling: resolved from the API key before anything else about the request is looked at. */
export interface AuthContext {
  orgId: string;
  keyId: string;
  /** The key's prefix and name: how audit entries name the key that made a change. */
  prefix: string;
  name: string;
  scopes: ApiKeyScope[];
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
}
