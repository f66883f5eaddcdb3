// The platform under test, as `npm start` runs it (tools/services.js, compiled entry points), but
// on its own bus namespace, database, Redis keys and ports, so that it never meets a developer's
// running stack or the test suite. Its processes are children of the harness: their PIDs are what
// the CPU columns read.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const services = require('../../tools/services');

const root = path.join(__dirname, '..', '..');

/** `npm run build` (incremental: seconds when nothing changed). */
function build() {
  const result = spawnSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-b', 'tsconfig.build.json'],
    { cwd: root, stdio: 'inherit' },
  );
  if (result.status !== 0) throw new Error('npm run build failed');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(check, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Starts `entries` ([{name, main, env}]) as child processes, their output appended to `logFile`.
 * Any of them exiting before stop() is an error the caller hears about through `failed`.
 */
function startProcesses(entries, logFile) {
  const log = fs.openSync(logFile, 'a');
  const children = [];
  let stopping = false;
  let onFailure = () => undefined;
  const failed = new Promise((_, reject) => {
    onFailure = reject;
  });
  failed.catch(() => undefined);
  // Node flags for the platform's processes only (NODE_OPTIONS refuses --cpu-prof), e.g. to profile:
  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench -- --scenarios verify
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  for (const entry of entries) {
    const child = spawn(process.execPath, [...nodeArgs, '-r', './tools/register-paths.js', entry.main], {
      cwd: root,
      stdio: ['ignore', log, log],
      env: entry.env,
    });
    child.on('exit', (code, signal) => {
      if (!stopping) onFailure(new Error(`${entry.name} exited (${signal ?? code}); see ${logFile}`));
    });
    children.push({ name: entry.name, pid: child.pid, child });
  }
  return {
    processes: children.map(({ name, pid }) => ({ label: name, pid })),
    failed,
    async stop() {
      stopping = true;
      await Promise.all(
        children.map(
          ({ child }) =>
            new Promise((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
              child.once('exit', () => {
                clearTimeout(force);
                resolve();
              });
              child.kill('SIGTERM');
            }),
        ),
      );
      fs.closeSync(log);
    },
  };
}

/** Short labels for the table's CPU column. */
const SHORT = {
  gateway: 'gw',
  'product-service': 'prod',
  'license-service': 'lic',
  'revocation-service': 'rev',
  'analytics-service': 'ana',
  'webhook-service': 'hook',
};

/**
 * Every service and the gateway on `databaseUrl` and `namespace`, health endpoints and the HTTP
 * port on free ports; resolves once the gateway answers /readyz.
 */
async function startPlatform({ databaseUrl, namespace, natsUrl, redisUrl, logFile, extraEnv = {} }) {
  const port = await freePort();
  const base = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    BUS_NAMESPACE: namespace,
    NATS_URL: natsUrl,
    REDIS_URL: redisUrl,
    BOOTSTRAP_DEFAULT_ORG: 'false',
    // No load balancer waits on this gateway: stop without the shutdown drain.
    READINESS_DRAIN_MS: '0',
    ...extraEnv,
  };
  const entries = [];
  const url = `http://127.0.0.1:${port}`;
  const probes = [];
  for (const service of services) {
    const env = { ...base };
    if (service.name === 'gateway') {
      env.PORT = String(port);
      probes.push(`${url}/readyz`);
    } else {
      env.HEALTH_PORT = String(await freePort());
      probes.push(`http://127.0.0.1:${env.HEALTH_PORT}/readyz`);
    }
    entries.push({ name: SHORT[service.name] ?? service.name, main: service.main, env });
  }
  const running = startProcesses(entries, logFile);
  await Promise.race([
    running.failed,
    Promise.all(probes.map((probe) => waitFor(async () => (await fetch(probe)).ok, probe, 120_000))),
  ]);
  return { url, ...running };
}

/** `npm run operator -- org create <name>` on `databaseUrl`: answers {id, adminKey}. */
function createOrganization(name, databaseUrl) {
  const result = spawnSync(process.execPath, ['tools/operator.js', 'org', 'create', name], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  const id = /\(([0-9a-f-]{36})\)/.exec(result.stdout)?.[1];
  const adminKey = /^(lk_\S+)$/m.exec(result.stdout)?.[1];
  if (result.status !== 0 || !id || !adminKey)
    throw new Error(`org create failed: ${result.stdout}${result.stderr}`);
  return { id, adminKey };
}

module.exports = { build, createOrganization, startPlatform, startProcesses, freePort, waitFor, root };
