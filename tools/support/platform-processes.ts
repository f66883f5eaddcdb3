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

const { root: checkoutRoot } = require('../build-if-checkout') as { root: string };
const { freePort } = require('../../bench/lib/platform') as { freePort(): Promise<number> };

export { freePort };

/** A tree's list of its processes (its tools/services.js): this checkout's, or another release's. */
function servicesOf(root: string): Array<{ name: string; main: string; env?: Record<string, string> }> {
  return require(join(root, 'tools', 'services'));
}

/**
 * Where a process runs when not on the machine's own network: a network namespace (a host of
 * tools/support/network-hosts.ts), and the address the test reaches it at.
 */
export interface Placement {
  netns: string;
  /** The address its probes (or a gateway's API) are reached at from the test. */
  address: string;
}

/** The command that runs `command` in the placement's namespace (or as it is, without one). */
function placed(placement: Placement | undefined, command: string, args: string[]): [string, string[]] {
  return placement ? ['ip', ['netns', 'exec', placement.netns, command, ...args]] : [command, args];
}

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
    /** The built tree it runs from: this checkout, or another release's (the rolling-upgrade test). */
    private readonly root: string,
    private readonly placement?: Placement,
  ) {}

  /**
   * `service` as tools/services.js names it; `env` on top of its own defaults from that list.
   * `root` is the tree whose compiled entry points run: this checkout unless given. With a
   * `placement` it runs in that network namespace, listening on every interface of it.
   */
  static async create(
    service: string,
    label: string,
    env: Record<string, string>,
    logDir: string,
    root = checkoutRoot,
    placement?: Placement,
  ): Promise<PlatformProcess> {
    const entry = servicesOf(root).find((candidate) => candidate.name === service);
    if (!entry) throw new Error(`no service named ${service}`);
    const port = await freePort();
    const portEnv: Record<string, string> =
      service === 'gateway' ? { PORT: String(port) } : { HEALTH_PORT: String(port) };
    return new PlatformProcess(
      service,
      label,
      entry.main,
      { ...entry.env, ...env, ...portEnv, ...(placement ? { HOST: '0.0.0.0' } : {}) },
      `http://${placement?.address ?? '127.0.0.1'}:${port}`,
      join(logDir, `${label}.log`),
      root,
      placement,
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
    // `ip netns exec` execs the command: the child's PID is the process's own.
    const [command, args] = placed(this.placement, process.execPath, [
      '-r',
      './tools/register-paths.js',
      this.main,
    ]);
    const child = spawn(command, args, {
      cwd: this.root,
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

  /** SIGINT, as Ctrl-C at a terminal. */
  interrupt(): Promise<Exit> {
    return this.signal('SIGINT');
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
    /** With a host: the node runs in its namespace, listening on its cluster address. */
    private readonly host?: NatsHost,
  ) {}

  get url(): string {
    return `nats://${this.host?.clusterAddress ?? '127.0.0.1'}:${this.port}`;
  }

  private get monitor(): string {
    return `http://${this.host?.clientAddress ?? '127.0.0.1'}:${this.monitorPort}`;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  spawn(): void {
    const [command, args] = placed(
      this.host && { netns: this.host.netns, address: this.host.clientAddress },
      'nats-server',
      ['-c', this.config],
    );
    const child = spawn(command, args, { stdio: 'ignore' });
    this.child = child;
    this.exit = new Promise((resolve) => child.once('exit', resolve));
  }

  /** Starts it (again) and waits until it has caught up with the cluster's JetStream. */
  async start(timeoutMs = 30_000): Promise<void> {
    this.spawn();
    await this.healthy(timeoutMs);
  }

  /** Resolves once the node's JetStream is current (after a restart, or a partition healed). */
  async healthy(timeoutMs = 30_000): Promise<void> {
    await waitFor(async () => (await fetch(`${this.monitor}/healthz`)).ok, {
      timeoutMs,
      intervalMs: 100,
      what: `NATS node ${this.name} healthy`,
    });
  }

  /** How many clients are connected to this node now. */
  async clientConnections(): Promise<number> {
    const response = await fetch(`${this.monitor}/varz`);
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

/** A host of tools/support/network-hosts.ts, for a node to run on. */
export interface NatsHost {
  netns: string;
  /** Clients and the other nodes connect here. */
  clusterAddress: string;
  /** The monitoring port is reached here, even while the host is cut off from the cluster. */
  clientAddress: string;
}

/**
 * `size` nats-server processes routed to each other in one cluster, JetStream on each (file store
 * under `dir`), listening on 127.0.0.1 only, or each on a host of its own when `hosts` are given
 * (one per node). Resolves once JetStream has a meta leader, i.e. a stream at `size` replicas can
 * be created.
 */
export async function startNatsCluster(dir: string, size = 3, hosts?: NatsHost[]): Promise<NatsNode[]> {
  const ports: Array<{ client: number; cluster: number; monitor: number }> = [];
  for (let i = 0; i < size; i += 1)
    ports.push({ client: await freePort(), cluster: await freePort(), monitor: await freePort() });
  const address = (i: number) => hosts?.[i]?.clusterAddress ?? '127.0.0.1';
  const nodes = ports.map(({ client, cluster, monitor }, i) => {
    const name = `n${i + 1}`;
    const store = join(dir, name);
    mkdirSync(store, { recursive: true });
    const routes = ports
      .map((other, j) => ({ other, j }))
      .filter(({ j }) => j !== i)
      .map(({ other, j }) => `nats-route://${address(j)}:${other.cluster}`)
      .join(', ');
    const config = join(dir, `${name}.conf`);
    writeFileSync(
      config,
      [
        `server_name: ${name}`,
        `listen: ${address(i)}:${client}`,
        `http: ${hosts ? '0.0.0.0' : '127.0.0.1'}:${monitor}`,
        `jetstream { store_dir: "${store}" }`,
        `cluster { name: licensing, listen: ${address(i)}:${cluster}, routes: [${routes}] }`,
        '',
      ].join('\n'),
    );
    return new NatsNode(name, client, monitor, config, hosts?.[i]);
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
