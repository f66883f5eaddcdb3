import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Metrics, metricsRegistry } from './registry';

/**
 * `GET /metrics` in Prometheus' text format, straight on Fastify: no Nest pipeline, no API key (it
 * is excluded from the Ingress; Prometheus scrapes the pods), not in the OpenAPI document.
 */
export function serveMetrics(fastify: FastifyInstance): void {
  fastify.get('/metrics', async (_request, reply) => {
    void reply.header('content-type', metricsRegistry.contentType);
    return metricsRegistry.metrics();
  });
}

/** One histogram observation per answered request, labelled by the route's template (bounded). */
export function measureHttpRequests(fastify: FastifyInstance): void {
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const route = request.routeOptions.url;
    if (route !== '/metrics') {
      Metrics.httpRequestDuration.observe(
        { method: request.method, route: route ?? 'unmatched', status: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
    }
    done();
  });
}
