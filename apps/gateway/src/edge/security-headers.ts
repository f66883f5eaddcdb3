import { FastifyInstance } from 'fastify';
import { isPublicPath } from '../identity/authenticate.hook';

/**
 * Headers on every answer, errors and unknown routes included. `nosniff` everywhere, so that a
 * browser never renders a license file or a JSON body as something else. `no-store` on everything
 * outside the public probes, OpenAPI documents and console files (which set their own, see
 * console.ts): API answers carry API keys (once, at creation), license files and customer data,
 * which no browser or shared cache may keep. The one exception is an answer its route made
 * cacheable on purpose (a signed revocation list sets its own `Cache-Control`).
 */
export function registerSecurityHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onSend', async (request, reply, payload) => {
    void reply.header('x-content-type-options', 'nosniff');
    if (!isPublicPath(request.url) && !reply.hasHeader('cache-control')) {
      void reply.header('cache-control', 'no-store');
    }
    return payload;
  });
}
