#!/usr/bin/env node
// Load on the hot paths of a running platform (`npm start`), through the gateway, with autocannon:
// check-revocation with 100 serials, sync, verify and validate. Prints requests/s and latency per path and
// the command that reproduces them.
//
//   LICENSING_API_KEY=lk_… node bench/hot-paths.js [--duration 10] [--connections 50]
const autocannon = require('autocannon');

const base = process.env.LICENSING_URL ?? 'http://127.0.0.1:3000';
const adminKey = process.env.LICENSING_API_KEY;
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const duration = arg('duration', 10);
const connections = arg('connections', 50);

async function api(method, path, body, key = adminKey) {
  const response = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

function run(title, request, key) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${base}${request.path}`,
        method: request.method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: request.body,
        connections,
        duration,
      },
      (error, result) => {
        if (error) return reject(error);
        const failed = result.non2xx + result.errors + result.timeouts;
        process.stdout.write(
          `${title.padEnd(34)} ${String(Math.round(result.requests.average)).padStart(7)} req/s` +
            `   p50 ${result.latency.p50} ms   p99 ${result.latency.p99} ms` +
            `${failed ? `   FAILED ${failed}` : ''}\n`,
        );
        resolve(result);
      },
    );
  });
}

async function main() {
  if (!adminKey)
    throw new Error('Set LICENSING_API_KEY to an admin key (npm start prints one on first boot)');
  const keyPair = await api('POST', '/key-pairs', { name: 'bench' });
  const product = await api('POST', '/products', {
    name: 'Bench',
    code: `bench-${Date.now().toString(36)}`,
    key_pair_id: keyPair.id,
  });
  const licenses = [];
  for (let i = 0; i < 100; i++) licenses.push(await api('POST', '/licenses', { product_id: product.id }));
  await api('DELETE', `/licenses/${licenses[0].id}`);
  const client = await api('POST', '/api-keys', { name: 'bench client', scopes: ['client'] });
  const serials = licenses.map((l) => l.serial);

  process.stdout.write(`${connections} connections, ${duration} s per path, against ${base}\n`);
  await run(
    'check-revocation (100 serials)',
    {
      method: 'POST',
      path: '/api/v1/licenses/check-revocation',
      body: JSON.stringify({ serials }),
    },
    client.key,
  );
  await run(
    'sync',
    {
      method: 'POST',
      path: '/api/v1/licenses/sync',
      body: JSON.stringify({
        license_serial: serials[1],
        hardware_fingerprint: 'bench',
        app_version: '1.0.0',
      }),
    },
    client.key,
  );
  await run(
    'verify (product_id)',
    {
      method: 'POST',
      path: '/api/v1/licenses/verify',
      body: JSON.stringify({ license_blob: licenses[1].license_blob, product_id: product.id }),
    },
    client.key,
  );
  await run(
    'validate (by serial)',
    {
      method: 'POST',
      path: '/api/v1/licenses/validate',
      body: JSON.stringify({ key: serials[1] }),
    },
    client.key,
  );
  process.stdout.write(
    `reproduce: LICENSING_API_KEY=… node bench/hot-paths.js --duration ${duration} --connections ${connections}\n`,
  );
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
