import { Readable } from 'node:stream';
import { FastifyInstance } from 'fastify';
import { DomainError } from '@licensing/shared/errors';

/** An oversized body up to this size is read to its end (and thrown away) before the `413`. */
const DRAIN_BYTES = 16 * 1024 * 1024;
/** ... for at most this long. */
const DRAIN_MS = 5_000;

/**
 * Answers a body declared larger than `limit` with a `413` once the client has finished sending it.
 * Answering at once and closing the connection while the client is still writing makes the
 * client's kernel see a reset (EPIPE or ECONNRESET) instead of the `413`: a client that writes a
 * 2 MiB body in one go lost the answer about one time in ten. The body is discarded as it arrives,
 * never held in memory; one declared larger than DRAIN_BYTES, or still arriving after DRAIN_MS, is
 * answered at once, as an abuse. Authentication (onRequest) still answers first.
 */
export function drainOversizedBodies(fastify: FastifyInstance, limit: number): void {
  fastify.addHook('preParsing', async (request, _reply, payload) => {
    const declared = Number(request.headers['content-length']);
    if (!(declared > limit)) return payload;
    if (declared <= DRAIN_BYTES) await drain(payload, DRAIN_MS);
    throw new DomainError('payload_too_large', `The request body is larger than ${limit / 1024 / 1024} MiB`);
  });
}

function drain(stream: Readable, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stream.once('end', done);
    stream.once('error', done);
    stream.once('close', done);
    stream.resume();
  });
}
