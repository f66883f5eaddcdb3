import { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '@licensing/shared/errors';
import { AddRouteConfig } from '../http/route-config';
import { RateLimitService } from './rate-limit.service';
import { RateLimitDecision, licenseOf, rateLimitHeaders, routeClassOf } from './rate-limits';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Also spend from the per-license activation budget of the license the body names. */
    rate_limit_per_license?: boolean;
  }
  interface FastifyRequest {
    rateLimit?: RateLimitDecision;
  }
}

/** Activation churn is a known abuse: this route also spends from the license's own budget. */
export const LimitPerLicense = (): MethodDecorator => AddRouteConfig({ rate_limit_per_license: true });

/**
 * The license whose activation budget a request spends: the one its body names, or for a license
 * or machine token always its own, so that a token naming another license (answered 404) cannot
 * spend that license's budget and lock its owner out.
 */
const budgetOf = (request: FastifyRequest): string | undefined =>
  request.auth?.license ? `id:${request.auth.license.id}` : licenseOf(request.body);

const classOf = (request: FastifyRequest) =>
  routeClassOf(request.method, request.routeOptions.config?.allowed_scopes);

/**
 * Checks every authenticated request once, in Fastify's hooks, so that a refused request has no
 * effect: in onRequest, after authentication and before the body is read; for a route with a
 * per-license budget in preHandler, once the body names the license. A request whose body could
 * not be read never got there: it is counted when its error is sent. Every response to an
 * authenticated request carries the headers, errors included.
 */
export function registerRateLimits(fastify: FastifyInstance, limiter: RateLimitService): void {
  const enforce = async (request: FastifyRequest, license?: string): Promise<void> => {
    const decision = await limiter.consume(request.auth!, classOf(request), license);
    request.rateLimit = decision;
    if (!decision.allowed) {
      throw new DomainError(
        'rate_limited',
        `Rate limit of ${decision.limit.limit} requests per ${decision.limit.window_seconds} s reached; ` +
          `retry in ${decision.state!.retryAfterSeconds} s`,
      );
    }
  };

  fastify.addHook('onRequest', async (request) => {
    if (request.auth && !request.routeOptions.config?.rate_limit_per_license) await enforce(request);
  });
  fastify.addHook('preHandler', async (request) => {
    if (request.auth && !request.rateLimit) await enforce(request, budgetOf(request));
  });
  fastify.addHook('onSend', async (request, reply) => {
    if (!request.auth) return;
    request.rateLimit ??= await limiter.consume(request.auth, classOf(request));
    void reply.headers(rateLimitHeaders(request.rateLimit));
  });
}
