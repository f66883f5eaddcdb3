/**
 * The platform as separate operating-system processes, as Kubernetes runs it: each service and
 * gateway a compiled entry point (tools/services.js) started with plain `node`, so that a test can
 * send one of them SIGTERM or SIGKILL and watch the others carry on. Also a NATS cluster of the
 * test's own. Every process is a child of the test and is stopped by its PID, never by name.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, openSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'nats';
import { waitFor } from '@licensing/shared/testing';

const { root } = require('../build-if-checkout') as { root: string };
const services = require('../services') as Array<{
  name: string;
  main: string;
  env?: Record<string, string>;
}>;
const { freePort } = require('../../bench/lib/platform') as { freePort(): Promise<number> };

export { freePort };

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One process of the platform: a service (its health port) or a gateway (its API port). */
export class PlatformProcess {
  private child?: ChildProcess;
  private exit?: Promise<Exit>;
  private expectedExit = false;
  /** Exits nobody asked for (a crash): the tests assert there are none. */
  readonly unexpectedExits: Exit[] = [];

  private constructor(
    readonly name: string,
    readonly label: string,
    private readonly main: string,
    private readonly env: Record<string, string>,
    /** `http://127.0.0.1:<port>`: the API of a gateway, the probes of a service. */
    readonly url: string,
    private readonly logFile: string,
  ) {}

  /** `service` as tools/services.js names it; `env` on top of its own defaults from that list. */
  static async create(
    service: string,
    label: string,
    env: Record<string, string>,
    logDir: string,
  ): Promise<PlatformProcess> {
    const entry = services.find((candidate) => candidate.name === service);
    if (!entry) throw new Error(`no service named ${service}`);
    const port = await freePort();
    const portEnv: Record<string, string> =
      service === 'gateway' ? { PORT: String(port) } : { HEALTH_PORT: String(port) };
    return new PlatformProcess(
      service,
      label,
      entry.main,
      { ...entry.env, ...env, ...portEnv },
      `http://127.0.0.1:${port}`,
      join(logDir, `${label}.log`),
    );
  }

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Spawns it; resolves once its readiness probe answers 200 (or fails if it exits first). */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.running) throw new Error(`${this.label} is already running`);
    const log = openSync(this.logFile, 'a');
    const child = spawn(process.execPath, ['-r', './tools/register-paths.js', this.main], {
      cwd: root,
      stdio: ['ignore', log, log],
      env: { ...process.env, ...this.env },
    });
    closeSync(log);
    this.child = child;
    this.expectedExit = false;
    this.exit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        if (!this.expectedExit) this.unexpectedExits.push({ code, signal });
        resolve({ code, signal });
      }),
    );
    const exited = this.exit.then((exit) => {
      throw new Error(
        `${this.label} exited while starting (${exit.signal ?? exit.code}); see ${this.logFile}`,
      );
    });
    exited.catch(() => undefined);
    await Promise.race([
      exited,
      waitFor(async () => (await fetch(`${this.url}/health/ready`)).ok, {
        timeoutMs,
        intervalMs: 100,
        what: `${this.label} ready`,
      }),
    ]);
  }

  /** SIGTERM, as Kubernetes stops a pod; resolves with how it exited. */
  terminate(): Promise<Exit> {
    return this.signal('SIGTERM');
  }

  /** SIGKILL, as a crash or an OOM kill would. */
  kill(): Promise<Exit> {
    return this.signal('SIGKILL');
  }

  /** The output of its last runs. */
  get log(): string {
    return this.logFile;
  }

  private async signal(signal: NodeJS.Signals): Promise<Exit> {
    if (!this.running) return (await this.exit) ?? { code: null, signal: null };
    this.expectedExit = true;
    this.child!.kill(signal);
    return this.exit!;
  }
}

/** Every process that is still running gets SIGKILL: for afterAll, whatever state a test left. */
export async function killAll(processes: Iterable<{ kill(): Promise<unknown> }>): Promise<void> {
  await Promise.all([...processes].map((process) => process.kill().catch(() => undefined)));
}

/** One node of a NATS cluster of the test's own, with JetStream, its store kept across restarts. */
export class NatsNode {
  private child?: ChildProcess;
  private exit?: Promise<unknown>;

  constructor(
    readonly name: string,
    readonly port: number,
    /** The monitoring port: `/healthz` answers 200 once the node's JetStream is current. */
    readonly monitorPort: number,
    private readonly config: string,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  spawn(): void {
    const child = spawn('nats-server', ['-c', this.config], { stdio: 'ignore' });
    this.child = child;
    this.exit = new Promise((resolve) => child.once('exit', resolve));
  }

  /** Starts it (again) and waits until it has caught up with the cluster's JetStream. */
  async start(timeoutMs = 30_000): Promise<void> {
    this.spawn();
    await waitFor(async () => (await fetch(`http://127.0.0.1:${this.monitorPort}/healthz`)).ok, {
      timeoutMs,
      intervalMs: 100,
      what: `NATS node ${this.name} healthy`,
    });
  }

  /** How many clients are connected to this node now. */
  async clientConnections(): Promise<number> {
    const response = await fetch(`http://127.0.0.1:${this.monitorPort}/varz`);
    return ((await response.json()) as { connections: number }).connections;
  }

  /** SIGTERM: the node closes its connections and leaves the cluster cleanly. */
  terminate(): Promise<void> {
    return this.signal('SIGTERM');
  }

  kill(): Promise<void> {
    return this.signal('SIGKILL');
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    if (!this.running) return;
    this.child!.kill(signal);
    await this.exit;
  }
}

/**
 * `size` nats-server processes routed to each other in one cluster, JetStream on each (file store
 * under `dir`), listening on 127.0.0.1 only. Resolves once JetStream has a meta leader, i.e. a
 * stream at `size` replicas can be created.
 */
export async function startNatsCluster(dir: string, size = 3): Promise<NatsNode[]> {
  const ports: Array<{ client: number; cluster: number; monitor: number }> = [];
  for (let i = 0; i < size; i += 1)
    ports.push({ client: await freePort(), cluster: await freePort(), monitor: await freePort() });
  const nodes = ports.map(({ client, cluster, monitor }, i) => {
    const name = `n${i + 1}`;
    const store = join(dir, name);
    mkdirSync(store, { recursive: true });
    const routes = ports
      .filter((_, j) => j !== i)
      .map((other) => `nats-route://127.0.0.1:${other.cluster}`)
      .join(', ');
    const config = join(dir, `${name}.conf`);
    writeFileSync(
      config,
      [
        `server_name: ${name}`,
        `listen: 127.0.0.1:${client}`,
        `http: 127.0.0.1:${monitor}`,
        `jetstream { store_dir: "${store}" }`,
        `cluster { name: licensing, listen: 127.0.0.1:${cluster}, routes: [${routes}] }`,
        '',
      ].join('\n'),
    );
    return new NatsNode(name, client, monitor, config);
  });
  for (const node of nodes) node.spawn();
  try {
    await waitForJetStream(nodes.map((node) => node.url).join(','));
  } catch (error) {
    // The caller never gets the nodes to stop: stop them here.
    await killAll(nodes);
    throw error;
  }
  return nodes;
}
/** Resolves once the cluster's JetStream answers (a meta leader is elected). */
export async function waitForJetStream(servers: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    async () => {
      const nc = await connect({ servers: servers.split(','), timeout: 1_000 });
      try {
        await (await nc.jetstreamManager({ timeout: 1_000 })).getAccountInfo();
        return true;
      } finally {
        await nc.close();
      }
    },
    { timeoutMs, intervalMs: 250, what: 'JetStream cluster' },
  );
}
