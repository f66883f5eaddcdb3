import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './wait-for';

/**
 * Servers of a test's own — redis-server and nats-server processes on free ports — for the tests
 * that kill them. Only these processes are ever stopped (by their PID), never the machine's shared
 * servers. Each keeps its data in a directory of its own, so a restart finds what was saved.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

export interface OwnServer {
  url: string;
  port: number;
  dir: string;
  /** Starts (again) on the same port and data directory. */
  start(): Promise<void>;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  /** Kills it and removes its data directory. */
  dispose(): Promise<void>;
}

function ownServer(
  name: string,
  url: (port: number) => string,
  args: (port: number, dir: string) => string[],
  ready: (port: number) => Promise<boolean>,
): (port?: number) => Promise<OwnServer> {
  return async (fixedPort) => {
    const port = fixedPort ?? (await freePort());
    const dir = mkdtempSync(join(tmpdir(), `licensing-${name}-`));
    let child: ChildProcess | undefined;
    const server: OwnServer = {
      url: url(port),
      port,
      dir,
      async start() {
        child = spawn(name, args(port, dir), { stdio: 'ignore' });
        await waitFor(() => ready(port), { what: `${name} on port ${port}` });
      },
      async kill() {
        const running = child;
        if (!running || running.exitCode !== null || running.signalCode !== null) return;
        const exited = new Promise((resolve) => running.once('exit', resolve));
        running.kill('SIGKILL');
        await exited;
      },
      async dispose() {
        await server.kill();
        rmSync(dir, { recursive: true, force: true });
      },
    };
    await server.start();
    return server;
  };
}

/** Accepts a TCP connection: enough to know the server listens. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A redis-server that snapshots only when told (SAVE), and loads its snapshot when it starts. */
export const startOwnRedis = ownServer(
  'redis-server',
  (port) => `redis://127.0.0.1:${port}`,
  (port, dir) => [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
  ],
  listening,
);

/** A nats-server with JetStream, its store in its own directory (kept across restarts). */
export const startOwnNats = ownServer(
  'nats-server',
  (port) => `nats://127.0.0.1:${port}`,
  (port, dir) => ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir],
  listening,
);

/**
 * Runs a Node script to its end (a benchmark's smoke run, say) from `cwd`, and answers what it
 * printed, stdout and stderr together. Fails with that output if it exits with anything but 0.
 */
export async function runNodeScript(args: string[], cwd: string): Promise<string> {
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, args, { cwd });
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.on('exit', resolve);
  });
  const printed = output.join('');
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited ${code}:\n${printed}`);
  return printed;
}
