#!/usr/bin/env node
// REFERENCE PIPELINE — not part of the product. The ceiling the benchmark compares the platform
// with: a minimal HTTP edge (Fastify + nats.js; no Nest, no validation, no auth, no rate limit)
// that forwards each request over NATS request/reply to the reference responder and returns its
// answer, the same shape as the real gateway → service hop. Started and stopped by bench/run.js.
//
//   REF_PORT=… NATS_URL=… REF_NAMESPACE=… node bench/reference/gateway.js
const fastify = require('fastify');
const { connect } = require('nats');
const shapes = require('./shapes');

async function main() {
  const prefix = process.env.REF_NAMESPACE || 'benchref';
  const nc = await connect({ servers: (process.env.NATS_URL || 'nats://127.0.0.1:4222').split(',') });
  const app = fastify({ logger: false });
  for (const shape of shapes) {
    const subject = `${prefix}.${shape.name}`;
    // A GET sends its path parameters; a POST its body, with its path parameters if it has any.
    const input =
      shape.method === 'GET'
        ? (request) => request.params
        : shape.url.includes('/:')
          ? (request) => ({ ...request.body, ...request.params })
          : (request) => request.body;
    app.route({
      method: shape.method,
      url: `/ref${shape.url}`,
      handler: async (request, reply) => {
        const data = input(request);
        const answer = await nc.request(subject, JSON.stringify(data), { timeout: 5000 });
        reply
          .code(answer.headers?.has('Bench-Error') ? 500 : (shape.status ?? 200))
          .header('content-type', 'application/json; charset=utf-8');
        return Buffer.from(answer.data);
      },
    });
  }
  await app.listen({ port: Number(process.env.REF_PORT || 3900), host: '127.0.0.1' });
  const stop = () => app.close().then(() => nc.drain());
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  process.stderr.write(`reference gateway: ${error.stack ?? error}\n`);
  process.exit(1);
});
