/**
 * closeGracefully on a real listening Fastify server and real sockets: what a client sees on a
 * keep-alive connection while the gateway is unready, and when it writes a request onto an idle
 * connection just after the gateway stopped listening.
 */
import { Socket, connect } from 'node:net';
import Fastify, { FastifyInstance } from 'fastify';
import { Readiness } from '@licensing/shared/messaging';
import { waitFor } from '@licensing/shared/testing';
import { closeGracefully } from './graceful-close';

/** Writes one HTTP/1.1 request on `socket` and resolves with the raw answer once it is complete. */
function exchange(socket: Socket, path: string): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    let raw = '';
    const onData = (chunk: Buffer) => {
      raw += chunk.toString();
      const [head, body = ''] = raw.split('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(head!)?.[1] ?? NaN);
      if (body.length >= length) {
        socket.off('data', onData);
        resolve({ head: head!, body });
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`connection closed; received: ${JSON.stringify(raw)}`)));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n`);
  });
}

async function open(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return socket;
}

describe('closeGracefully', () => {
  let fastify: FastifyInstance;
  let readiness: Readiness;
  let port: number;
  const sockets: Socket[] = [];

  beforeEach(async () => {
    readiness = new Readiness();
    fastify = Fastify({ return503OnClosing: false });
    closeGracefully(fastify, readiness);
    fastify.get('/ok', async () => ({ ok: true }));
    fastify.get('/slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return { slow: true };
    });
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    port = (fastify.server.address() as { port: number }).port;
  });
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    await fastify.close().catch(() => undefined);
  });

  it('keeps connections alive while ready, and asks clients to close them once unready', async () => {
    const socket = await open(port);
    sockets.push(socket);
    expect((await exchange(socket, '/ok')).head).not.toMatch(/^connection: close/im);
    readiness.stop();
    const unready = await exchange(socket, '/ok');
    expect(unready.head).toMatch(/^HTTP\/1\.1 200/);
    expect(unready.head).toMatch(/^connection: close/im);
  });

  it('answers a request written onto an idle connection after it stopped listening 503 in problem+json, and finishes one in flight', async () => {
    const idle = await open(port);
    const busy = await open(port);
    sockets.push(idle, busy);
    expect((await exchange(idle, '/ok')).head).toMatch(/^HTTP\/1\.1 200/);
    const inFlight = exchange(busy, '/slow');
    await new Promise((resolve) => setTimeout(resolve, 50));

    readiness.stop();
    const closed = fastify.close();
    await waitFor(() => !fastify.server.listening, { what: 'the listening socket closed' });
    // New connections are refused: a load balancer retries them elsewhere.
    await expect(open(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // The idle keep-alive connection is still open: a request on it gets an answer, not a reset.
    const late = await exchange(idle, '/ok');
    expect(late.head).toMatch(/^HTTP\/1\.1 503/);
    expect(late.head).toMatch(/^content-type: application\/problem\+json/im);
    expect(late.head).toMatch(/^connection: close/im);
    expect(late.head).toMatch(/^retry-after: 1/im);
    expect(JSON.parse(late.body)).toMatchObject({ status: 503, code: 'unavailable' });

    const slow = await inFlight;
    expect(slow.head).toMatch(/^HTTP\/1\.1 200/);
    // Answered with Connection: close too, so the connection ends with it and the close completes.
    expect(slow.head).toMatch(/^connection: close/im);
    expect(JSON.parse(slow.body)).toEqual({ slow: true });
    await closed;
  });
});
