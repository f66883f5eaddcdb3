#!/usr/bin/env node
// REFERENCE PIPELINE — not part of the product. The other half of the ceiling: a plain nats.js
// responder (no Nest, no validation) that answers each reference subject by making the same
// backing calls as the platform's service for that request — and nothing else. One file per shape
// beside this one (see shapes.js). Started and stopped by bench/run.js.
const { Pool } = require('pg');
const Redis = require('ioredis');
const { connect, headers } = require('nats');
const shapes = require('./shapes');
const { REFERENCE_APPLICATION } = require('../lib/pg-profile');

async function main() {
  const env = process.env;
  const prefix = env.REF_NAMESPACE || 'benchref';
  const nc = await connect({ servers: (env.NATS_URL || 'nats://127.0.0.1:4222').split(',') });
  // The same clients and pool size as the services (ioredis defaults, 10 PostgreSQL connections).
  const deps = {
    nc,
    prefix,
    orgId: env.REF_ORG_ID,
    redisNamespace: env.REF_REDIS_NAMESPACE ?? '',
    redis: new Redis(env.REDIS_URL || 'redis://127.0.0.1:6379'),
    // Named, so that a PostgreSQL profile (--pg-profile) tells these from the platform's connections.
    pg: new Pool({ connectionString: env.DATABASE_URL, max: 10, application_name: REFERENCE_APPLICATION }),
    publicKeys: JSON.parse(env.REF_PUBLIC_KEYS || '{}'),
  };
  // The first failure of each shape goes to the log (bench/results/reference.log).
  const told = new Set();
  for (const shape of shapes) {
    const state = shape.setup ? await shape.setup(deps) : undefined;
    nc.subscribe(`${prefix}.${shape.name}`, {
      queue: 'reference',
      callback: (error, message) => {
        if (error) return;
        shape.handle(JSON.parse(Buffer.from(message.data).toString()), deps, state).then(
          (answer) => message.respond(JSON.stringify(answer)),
          (failure) => {
            if (!told.has(shape.name)) process.stderr.write(`reference ${shape.name}: ${failure}\n`);
            told.add(shape.name);
            const failed = headers();
            failed.set('Bench-Error', '1');
            message.respond(JSON.stringify({ error: String(failure) }), { headers: failed });
          },
        );
      },
    });
  }
  await nc.flush();
  process.stdout.write('reference responder ready\n');
  const stop = async () => {
    await nc.drain();
    deps.redis.disconnect();
    await deps.pg.end();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  process.stderr.write(`reference responder: ${error.stack ?? error}\n`);
  process.exit(1);
});
