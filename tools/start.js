#!/usr/bin/env node
// `npm start`: compiles the workspace (and builds the console when its sources changed), then runs
// every service and the gateway as separate processes on localhost, each applying its own
// migrations as it boots, and says where it serves once the gateway is ready. It stays in the
// foreground; Ctrl-C stops them all. It prints the processes' log lines as they come, rewritten
// for a person on a terminal (tools/log-lines.js).
const { spawn, spawnSync } = require('node:child_process');
const path = require('node:path');
const services = require('./services');
const { buildConsole } = require('./build-console');
const { eachLine, prettyLine, wantsPretty } = require('./log-lines');

const root = path.join(__dirname, '..');
const say = (line) => process.stdout.write(`${line}\n`);
const started = Date.now();
const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
say('Compiling the workspace (SWC, no type check: `npm run typecheck` does that)…');
const build = spawnSync(process.execPath, [path.join(__dirname, 'compile.js')], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
});
if (build.status !== 0) process.exit(build.status ?? 1);
// The browser console the gateway serves at /console, rebuilt only when its sources changed.
if (!buildConsole()) process.exit(1);
say(`Compiled in ${seconds()}. Starting ${services.map((service) => service.name).join(', ')}…`);

const children = new Map();
let stopping = false;
/** On a terminal, log lines are rewritten for a person (tools/log-lines.js). */
const pretty = wantsPretty(process.stdout);
/** The admin key the gateway printed on the first boot of this database, for the ready block. */
let firstBootKey;

function stopAll(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children.values()) child.kill('SIGTERM');
  const force = setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
  }, 10_000);
  force.unref();
  process.exitCode = code;
}

// One setting moves the whole stack: each service's health port follows the gateway's PORT.
const port = process.env.PORT ?? '3000';
const healthPorts = new Map(
  services.filter((s) => s.healthOffset !== undefined).map((s) => [s.name, Number(port) + s.healthOffset]),
);

for (const service of services) {
  const healthPort = healthPorts.get(service.name);
  const child = spawn(process.execPath, ['-r', './tools/register-paths.js', service.main], {
    cwd: root,
    stdio: ['inherit', 'pipe', 'pipe'],
    // HEALTH_PORT is per process: one set for `npm start` would make five services share it.
    env: { ...service.env, ...process.env, ...(healthPort ? { HEALTH_PORT: String(healthPort) } : {}) },
  });
  children.set(service.name, child);
  eachLine(child.stdout, (line) => {
    firstBootKey ??= /export LICENSING_API_KEY=(lk_\S+)/.exec(line)?.[1];
    process.stdout.write(`${pretty ? prettyLine(line) : line}\n`);
  });
  eachLine(child.stderr, (line) => process.stderr.write(`${pretty ? prettyLine(line) : line}\n`));
  child.on('exit', (code, signal) => {
    children.delete(service.name);
    if (!stopping) {
      process.stderr.write(`${service.name} exited (${signal ?? code}); stopping the others\n`);
      stopAll(1);
    }
  });
}

process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

// Once the gateway answers, one line that says where everything is and how to get a key (the first
// one is printed only on the first boot; later boots would otherwise say nothing).
const host = process.env.HOST && process.env.HOST !== '0.0.0.0' ? process.env.HOST : '127.0.0.1';
const origin = `http://${host === '127.0.0.1' ? 'localhost' : host}:${port}`;
const organization = process.env.BOOTSTRAP_DEFAULT_ORG === 'false' ? '<organization>' : 'default';

async function announceWhenReady() {
  const deadline = Date.now() + 120_000;
  while (!stopping && Date.now() < deadline) {
    try {
      if ((await fetch(`http://${host}:${port}/readyz`)).ok) {
        process.stdout.write(
          `\nLicensing platform ready (${seconds()}): API ${origin}/api/v1, console ${origin}/console, docs ${origin}/docs, OpenAPI ${origin}/openapi.json; ` +
            `health and metrics: ${[...healthPorts].map(([name, p]) => `${name} :${p}`).join(', ')}; ` +
            `an admin API key: npm run operator -- keys create --org ${organization}. Ctrl-C stops it.\n` +
            (firstBootKey
              ? `\n  First boot: the "${organization}" organization's admin API key, shown only this once:\n\n` +
                `    export LICENSING_API_KEY=${firstBootKey}\n`
              : '') +
            '\n',
        );
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
void announceWhenReady();
