import { Span, SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { extractTraceContext, tracer, tracing } from './tracing';

const spans = new WeakMap<FastifyRequest, Span>();

const headerGetter = {
  get: (headers: FastifyRequest['headers'], key: string) => headers[key],
  keys: (headers: FastifyRequest['headers']) => Object.keys(headers),
};

/**
 * One server span per HTTP request, from its first hook to its answer, continuing the trace of the
 * caller's `traceparent` if it sent one. Registered before any other hook, so that authentication
 * and rate limiting are inside it; nothing is registered while tracing is off.
 */
export function traceHttpRequests(fastify: FastifyInstance): void {
  if (!tracing.enabled) return;
  fastify.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    const parent = extractTraceContext(request.headers, headerGetter);
    const span = tracer().startSpan(
      request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: request.method,
          [ATTR_URL_PATH]: request.url.split('?', 1)[0],
          'licensing.request_id': request.id,
        },
      },
      parent,
    );
    spans.set(request, span);
    done();
  });
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const span = spans.get(request);
    if (span) {
      const route = request.routeOptions.url;
      // The route's template names the span (bounded); an unmatched path keeps the method alone.
      if (route) span.updateName(`${request.method} ${route}`).setAttribute(ATTR_HTTP_ROUTE, route);
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
}

/**
 * Runs `fn` with the request's span active, so the bus requests (and their spans) it makes are
 * children of it. Where the gateway enters a request's context; a plain call while tracing is off.
 */
export function inRequestSpan<T>(request: FastifyRequest, fn: () => T): T {
  if (!tracing.enabled) return fn();
  const span = spans.get(request);
  return span ? context.with(trace.setSpan(context.active(), span), fn) : fn();
}
