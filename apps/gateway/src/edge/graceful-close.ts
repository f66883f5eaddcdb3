import { Server } from 'node:net';
import { FastifyInstance } from 'fastify';
import { DomainError } from '@licensing/shared/errors';
import { Readiness } from '@licensing/shared/messaging';
import { toProblem } from '../http/problem';
import { sendProblem } from './problem.filter';

/**
 * After the listening socket closes, how long connections already accepted get to deliver the
 * request they carry before idle ones are closed. On localhost or in a pod a request follows its
 * connection within a millisecond; this only has to outlast a busy event loop.
 */
const CLOSE_LINGER_MS = 250;

/**
 * How the gateway stops taking HTTP traffic (SIGTERM) without closing a connection under a request
 * a client has sent:
 *
 * 1. Unready (readiness probe 503) for READINESS_DRAIN_MS, still serving: every answer now carries
 *    `Connection: close`, so clients' keep-alive pools stop reusing connections to this process,
 *    and each connection ends with the answer it was waiting for.
 * 2. Then it stops listening (new connections are refused, and a load balancer retries them
 *    elsewhere), while the connections already accepted get `CLOSE_LINGER_MS` to deliver their
 *    request: each is answered `503 unavailable` in the API's problem format, with `Retry-After`.
 *    (A connection still in the kernel's accept queue at that instant is reset by the kernel: no
 *    server can prevent it, which is why step 1 gives load balancers the time to stop sending.)
 * 3. Then Fastify closes the connections left idle and waits for requests in flight to be answered.
 *
 * Fastify's own behaviour would close idle keep-alive connections at the same instant as the
 * listening socket, so that a request written to one of them just then meets a reset, and it
 * answers requests that arrive while closing with a 503 of its own format
 * (`return503OnClosing`, turned off where the adapter is created).
 */
export function closeGracefully(fastify: FastifyInstance, readiness: Readiness): void {
  let closing = false;
  fastify.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    const problem = toProblem(
      new DomainError('unavailable', 'This gateway is shutting down; retry the request'),
    );
    void reply.header('retry-after', '1');
    sendProblem(reply, problem.problem);
    return reply;
  });
  // Every answer once unready, including those to requests that arrived before: a connection left
  // idle after its answer would otherwise hold the close open for the keep-alive timeout.
  fastify.addHook('onSend', async (_request, reply) => {
    if (readiness.isStopping) void reply.header('connection', 'close');
  });
  fastify.addHook('preClose', async () => {
    closing = true;
    // Stop accepting connections, but without http.Server#close's closing of idle connections:
    // Fastify does that next, once accepted connections have delivered their request.
    Server.prototype.close.call(fastify.server);
    await new Promise((resolve) => setTimeout(resolve, CLOSE_LINGER_MS));
  });
}
