import { randomInt } from 'node:crypto';
import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { isConnectionLost } from '@licensing/shared/errors';
import { Problem, toProblem } from '../http/problem';

/**
 * Writes a problem+json answer, with the `WWW-Authenticate` challenge a 401 owes and the
 * `Retry-After` a 429 or 503 owes. A 503 without a wait of its own gets 1 to 5 s at random, so
 * that a fleet refused during an outage does not come back all in the same second.
 */
export function sendProblem(reply: FastifyReply, problem: Problem, retryAfterSeconds?: number): void {
  if (problem.code === 'unauthorized') void reply.header('www-authenticate', 'Bearer');
  const wait = retryAfterSeconds ?? (problem.status === 503 ? 1 + randomInt(5) : undefined);
  if (wait !== undefined && !reply.hasHeader('retry-after')) void reply.header('retry-after', String(wait));
  void reply.status(problem.status).type('application/problem+json').send(problem);
}

const logger = new Logger('Http');

/**
 * Answers a failure as problem+json, logging what an operator must see: a lost database connection
 * (a 503 like any unavailable backing service, but worth a look) and anything unexpected (a 500).
 */
export function answerFailure(request: FastifyRequest, reply: FastifyReply, exception: unknown): void {
  const { problem, unexpected, retryAfterSeconds } = toProblem(exception);
  if (isConnectionLost(exception)) {
    logger.warn({
      msg: 'database connection lost under a request',
      request_id: request.id,
      err: String(exception),
    });
  }
  if (unexpected) {
    logger.error({
      msg: 'unexpected error',
      request_id: request.id,
      err: exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
    });
  }
  sendProblem(reply, problem, retryAfterSeconds);
}

/**
 * The one place where a failure becomes an HTTP answer: route handlers, guards, pipes, and (through
 * Nest's Fastify error handler) the onRequest authentication hook and body parsing. Direct routes
 * (direct-routes.ts) answer theirs with the same `answerFailure`.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    answerFailure(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), exception);
  }
}
