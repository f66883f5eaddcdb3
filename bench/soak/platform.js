// The platform under soak: every service and the gateway as child processes, as `npm start` runs
// them (tools/services.js, compiled entry points), on the soak's own database, bus namespace and
// free ports. Each child leads a process group of its own, so Ctrl-C in the terminal reaches only
// the soak, which then reports and stops them by PID.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const services = require('../../tools/services');
const { freePort, root, waitFor } = require('../lib/platform');

/**
 * Spawns every process with `env` on top of its own settings, output appended to `logFile`.
 * Returns at once: `ready()` waits for every readiness probe, `exited` rejects when a process
 * exits before `stop()`, and `stop()` sends SIGTERM to each PID (SIGKILL after 10 s).
 */
async function spawnPlatform({ env, logFile }) {
  const log = fs.openSync(logFile, 'a');
  const processes = [];
  let stopping = false;
  let reject = () => undefined;
  const exited = new Promise((_, fail) => {
    reject = fail;
  });
  exited.catch(() => undefined);
  try {
    for (const service of services) {
      const port = await freePort();
      const ports = service.name === 'gateway' ? { PORT: String(port) } : { HEALTH_PORT: String(port) };
      const child = spawn(process.execPath, ['-r', './tools/register-paths.js', service.main], {
        cwd: root,
        detached: true,
        stdio: ['ignore', log, log],
        env: { ...process.env, ...service.env, ...env, ...ports },
      });
      child.on('exit', (code, signal) => {
        if (!stopping) reject(new Error(`${service.name} exited (${signal ?? code}); see ${logFile}`));
      });
      // The gateway serves /metrics on its API port, a service on its health port.
      processes.push({ label: service.name, pid: child.pid, url: `http://127.0.0.1:${port}`, child });
    }
  } finally {
    fs.closeSync(log);
  }
  const gateway = processes.find((p) => p.label === 'gateway');
  return {
    url: gateway.url,
    processes: processes.map(({ label, pid, url }) => ({ label, pid, url })),
    exited,
    ready: () =>
      Promise.race([
        exited,
        Promise.all(
          processes.map((p) =>
            waitFor(async () => (await fetch(`${p.url}/health/ready`)).ok, `${p.label} ready`, 180_000),
          ),
        ),
      ]),
    async stop() {
      stopping = true;
      await Promise.all(processes.map(({ child }) => stopChild(child)));
    },
  };
}

function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

module.exports = { spawnPlatform };
