/**
 * Two `npm start` stacks on one machine, as a developer runs a demo beside their own: `tools/start.js`
 * itself, twice, each with its own PORT (the services' health ports follow it), database and bus
 * namespace. Both come up, say where they serve, answer on every port they announce, keep their
 * data apart, and stop on Ctrl-C.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import {
  TEST_DATABASE_NAME,
  TEST_NATS_URL,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  build,
  deleteNamespaceStreams,
  testDatabaseUrl,
  uniqueNamespace,
  waitFor,
} from '@licensing/shared/testing';

const root = path.join(__dirname, '..');
const services = require('./services') as Array<{ name: string; healthOffset?: number }>;
const { buildConsole } = require('./build-console') as { buildConsole: () => boolean };
const HEALTH = services.filter((service) => service.healthOffset !== undefined);

const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/** A gateway port whose health ports (+101 to +105) are free too, and far from `other`'s. */
async function freeBase(other = -1_000): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    if (Math.abs(base - other) < 200) continue;
    const ports = [base, ...HEALTH.map((service) => base + service.healthOffset!)];
    if ((await Promise.all(ports.map(isFree))).every(Boolean)) return base;
  }
}

interface Stack {
  port: number;
  namespace: string;
  database: string;
  child: ChildProcess;
  output: () => string;
}

describe('two npm start stacks side by side', () => {
  const stacks: Stack[] = [];

  afterAll(async () => {
    for (const stack of stacks) if (stack.child.exitCode === null) stack.child.kill('SIGKILL');
    const pg = new Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
    await pg.connect();
    for (const stack of stacks) {
      await deleteNamespaceStreams(stack.namespace);
      await pg.query(`DROP DATABASE IF EXISTS "${stack.database}" WITH (FORCE)`);
    }
    await pg.end();
  });

  /** `npm start` (tools/start.js) with only the settings a second stack needs. */
  async function start(name: string, port: number, extra: Record<string, string> = {}): Promise<Stack> {
    const namespace = uniqueNamespace(name);
    const database = `${TEST_DATABASE_NAME}_${name}`;
    let output = '';
    const child = spawn(process.execPath, ['tools/start.js'], {
      cwd: root,
      env: {
        ...process.env,
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
        PORT: String(port),
        DATABASE_URL: testDatabaseUrl(database),
        BUS_NAMESPACE: namespace,
        NATS_URL: TEST_NATS_URL,
        REDIS_URL: TEST_REDIS_URL,
        ...extra,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const stack = { port, namespace, database, child, output: () => output };
    stacks.push(stack);
    await waitFor(() => /Licensing platform ready/.test(output) || child.exitCode !== null, {
      what: `stack ${name} to be ready`,
      timeoutMs: 150_000,
      intervalMs: 200,
    });
    expect({ name, exited: child.exitCode, output: child.exitCode === null ? '' : output }).toEqual({
      name,
      exited: null,
      output: '',
    });
    return stack;
  }

  it('runs both, each on the ports it announces, with its own data, and stops each on Ctrl-C', async () => {
    // Built first, so that the two stacks' own compile steps find nothing to do and both start at once.
    build();
    expect(buildConsole()).toBe(true);
    const ports = [await freeBase()];
    ports.push(await freeBase(ports[0]));
    const [first, second] = await Promise.all([
      // Off a terminal, log lines pass through as JSON.
      start('a', ports[0]!),
      // A HEALTH_PORT in the environment would put five services on one port: npm start sets its
      // own. LOG_FORMAT=pretty: lines for a person, as on a terminal.
      start('b', ports[1]!, { HEALTH_PORT: '3101', LOG_FORMAT: 'pretty' }),
    ]);

    // A short start: what it is doing, no line per route mapped, the first-boot key in the ready block.
    const keyOf = (stack: Stack) => /export LICENSING_API_KEY=(lk_\S+)/.exec(stack.output())![1]!;
    for (const stack of [first, second]) {
      const output = stack.output();
      expect(output).toMatch(/^Compiling the workspace/);
      expect(output).not.toMatch(/Mapped \{/);
      expect(output.split('\n').length).toBeLessThan(80);
      const block = output.slice(output.indexOf('Licensing platform ready'));
      expect(block).toContain(`export LICENSING_API_KEY=${keyOf(stack)}`);
    }
    expect(first.output()).toMatch(/^\{"level":"info",.*"service":"gateway"/m);
    expect(second.output()).toMatch(/^\d\d:\d\d:\d\d {2}INFO {3}gateway {2}/m);
    expect(second.output()).not.toMatch(/^\{"level"/m);

    for (const stack of [first, second]) {
      const ready = /Licensing platform ready \([\d.]+ s\): .*/.exec(stack.output())![0];
      expect(ready).toContain(`API http://localhost:${stack.port}/api/v1`);
      const announced = HEALTH.map((service) => `${service.name} :${stack.port + service.healthOffset!}`);
      expect(ready).toContain(`health and metrics: ${announced.join(', ')}`);
      expect((await fetch(`http://127.0.0.1:${stack.port}/readyz`)).status).toBe(200);
      for (const service of HEALTH) {
        const live = await fetch(`http://127.0.0.1:${stack.port + service.healthOffset!}/health/live`);
        expect({ service: service.name, status: live.status }).toEqual({
          service: service.name,
          status: 200,
        });
      }
    }

    // Each printed the admin key of its own first boot; neither key opens the other stack.
    const status = (stack: Stack, key: string) =>
      fetch(`http://127.0.0.1:${stack.port}/api/v1/products`, {
        headers: { authorization: `Bearer ${key}` },
      }).then((response) => response.status);
    expect(keyOf(first)).not.toBe(keyOf(second));
    expect(await status(first, keyOf(first))).toBe(200);
    expect(await status(second, keyOf(second))).toBe(200);
    expect(await status(second, keyOf(first))).toBe(401);

    for (const stack of [first, second]) {
      const exited = new Promise<number | null>((resolve) => stack.child.once('exit', resolve));
      stack.child.kill('SIGINT');
      await waitFor(() => stack.child.exitCode !== null, { what: 'the stack to stop', timeoutMs: 20_000 });
      expect(await exited).toBe(0);
    }
  }, 360_000);
});
