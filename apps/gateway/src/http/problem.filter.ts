import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { isConnectionLost } from '@licensing/shared/errors';
import { Problem, toProblem } from './problem';

/** Writes a problem+json answer (with the `WWW-Authenticate` challenge a 401 owes). */
export function sendProblem(reply: FastifyReply, problem: Problem): void {
  if (problem.code === 'unauthorized') void reply.header('www-authenticate', 'Bearer');
  void reply.status(problem.status).type('application/problem+json').send(problem);
}

/**
 * The one place where a failure becomes an HTTP answer: route handlers, guards, pipes, and (through
 * Nest's Fastify error handler) the onRequest authentication hook and body parsing.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('Http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { problem, unexpected } = toProblem(exception);
    if (isConnectionLost(exception)) {
      // A 503 like any unavailable backing service, but worth an operator's eye.
      this.logger.warn({
        msg: 'database connection lost under a request',
        request_id: request.id,
        err: String(exception),
      });
    }
    if (unexpected) {
      this.logger.error({
        msg: 'unexpected error',
        request_id: request.id,
        err: exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
      });
    }
    sendProblem(reply, problem);
  }
}
