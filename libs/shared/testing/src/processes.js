// @ts-check
/**
 * Processes of a test's or a benchmark's own: the platform's services and gateway as compiled entry
 * points (tools/services.js), as `npm start` and Kubernetes run them; a NATS cluster; redis-server
 * and nats-server on free ports; a Node script run to its end. Each is a child of the caller and is
 * stopped by its PID, never by name. Plain CommonJS typed by JSDoc: `npm run bench` loads it with
 * node, without a build (bench/lib/platform.js).
 */
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { connect } = require('nats');
const { waitFor } = require('./wait-for');

/** This checkout. */
const root = path.join(__dirname, '..', '..', '..', '..');

/** @returns {Promise<number>} a TCP port that nothing listens on now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** `npm run build` without the console (tools/compile.js: a moment when nothing changed). */
function build() {
  const result = spawnSync(process.execPath, [path.join(root, 'tools/compile.js')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error('npm run build failed');
}

/**
 * `npm run operator -- org create <name>` on `databaseUrl`.
 * @param {string} name
 * @param {string} databaseUrl
 * @returns {{ id: string, adminKey: string }}
 */
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

/**
 * @typedef {object} Service A process of the platform, as a tree's tools/services.js lists it.
 * @property {string} name
 * @property {string} main its compiled entry point
 * @property {Record<string, string>} [env] what `npm start` sets for it
 */

/**
 * A tree's list of its processes: this checkout's, or another release's.
 * @param {string} [tree]
 * @returns {Service[]}
 */
function servicesOf(tree = root) {
  return require(path.join(tree, 'tools', 'services'));
}

/**
 * Where a process runs when not on the machine's own network: a network namespace (a host of
 * tools/support/network-hosts.ts), and the address the caller reaches it at.
 * @typedef {object} Placement
 * @property {string} netns
 * @property {string} address its probes (or a gateway's API) are reached here
 */

/** @type {string | undefined} */
let natsBinary;

/**
 * The nats-server the tests' own servers run: a current one, fetched once by
 * tools/ensure-nats-server.sh (the machine's may be too old for clusters under partitions).
 * @returns {string}
 */
function natsServer() {
  natsBinary ??= execFileSync(path.join(root, 'tools', 'ensure-nats-server.sh'), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  return natsBinary;
}

/**
 * The command that runs `command` in the placement's namespace (or as it is, without one).
 * `ip netns exec` execs the command: the child's PID is the process's own.
 * @param {Placement | undefined} placement
 * @param {string} command
 * @param {string[]} args
 * @returns {[string, string[]]}
 */
function placed(placement, command, args) {
  return placement ? ['ip', ['netns', 'exec', placement.netns, command, ...args]] : [command, args];
}

/** @typedef {{ code: number | null, signal: NodeJS.Signals | null }} Exit */

/**
 * @typedef {object} ProcessOptions
 * @property {string} label who it is in logs, tables and errors
 * @property {string} main its entry point, relative to `root`
 * @property {string} logFile its output goes here, appended
 * @property {Record<string, string | undefined>} [env] on top of this process's environment
 * @property {string} [name] the service, as tools/services.js names it (default: the label)
 * @property {string} [url] where it answers `/health/ready`
 * @property {string} [root] the tree it runs from (default: this checkout)
 * @property {Placement} [placement] a network namespace to run in
 * @property {boolean} [detached] leads a process group of its own: Ctrl-C at a terminal reaches
 *   only the caller, which then stops it
 * @property {string[]} [nodeArgs] Node flags, e.g. `--cpu-prof` (NODE_OPTIONS refuses some)
 */

/**
 * One Node process of a tree, with tools/register-paths.js so that its `@licensing/*` imports
 * resolve to the compiled libraries: a service (its health port), a gateway (its API port), or any
 * script (a benchmark's reference pipeline).
 */
class PlatformProcess {
  /** @type {import('node:child_process').ChildProcess | undefined} */
  #child;
  /** @type {Promise<Exit> | undefined} */
  #exit;
  #expectedExit = false;
  #options;

  /** @param {ProcessOptions} options */
  constructor(options) {
    this.#options = options;
    this.label = options.label;
    this.name = options.name ?? options.label;
    /** `http://<address>:<port>`: the API of a gateway, the probes of a service ('' for none). */
    this.url = options.url ?? '';
    /** The output of its runs. */
    this.log = options.logFile;
    /** Exits nobody asked for (a crash): the tests assert there are none. @type {Exit[]} */
    this.unexpectedExits = [];
  }

  /**
   * `service` as tools/services.js names it; `env` on top of its own defaults from that list, and
   * a free port for its API (a gateway) or its probes (a service). `tree` is the tree whose
   * compiled entry points run: this checkout unless given. With a `placement` it runs in that
   * network namespace, listening on every interface of it. Its output goes to `<logDir>/<label>.log`.
   * @param {string} service
   * @param {string} label
   * @param {Record<string, string>} env
   * @param {string} logDir
   * @param {string} [tree]
   * @param {Placement} [placement]
   */
  static create(service, label, env, logDir, tree = root, placement) {
    return forService(service, {
      label,
      env,
      logFile: path.join(logDir, `${label}.log`),
      root: tree,
      placement,
    });
  }

  /** @returns {number | undefined} while it runs */
  get pid() {
    return this.running ? this.#child?.pid : undefined;
  }

  get running() {
    return !!this.#child && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** How its last run ended, once it has; undefined before it was spawned. */
  get exited() {
    return this.#exit;
  }

  /** Spawns it and returns at once. */
  spawn() {
    if (this.running) throw new Error(`${this.label} is already running`);
    const { main, env, placement, detached = false, nodeArgs = [] } = this.#options;
    const log = fs.openSync(this.log, 'a');
    const [command, args] = placed(placement, process.execPath, [
      ...nodeArgs,
      '-r',
      './tools/register-paths.js',
      main,
    ]);
    const child = spawn(command, args, {
      cwd: this.#options.root ?? root,
      stdio: ['ignore', log, log],
      env: { ...process.env, ...env },
      detached,
    });
    fs.closeSync(log);
    this.#child = child;
    this.#expectedExit = false;
    this.#exit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        if (!this.#expectedExit) this.unexpectedExits.push({ code, signal });
        resolve({ code, signal });
      }),
    );
  }

  /** Resolves once its readiness probe answers 200; fails if it exits first. */
  async ready(timeoutMs = 60_000) {
    if (!this.#exit || !this.url) throw new Error(`${this.label} has no readiness probe to wait for`);
    const exited = this.#exit.then((exit) => {
      throw new Error(`${this.label} exited while starting (${exit.signal ?? exit.code}); see ${this.log}`);
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

  /** Spawns it; resolves once it is ready. */
  async start(timeoutMs = 60_000) {
    this.spawn();
    await this.ready(timeoutMs);
  }

  /** SIGTERM, as Kubernetes stops a pod; resolves with how it exited. */
  terminate() {
    return this.#signal('SIGTERM');
  }

  /** SIGINT, as Ctrl-C at a terminal. */
  interrupt() {
    return this.#signal('SIGINT');
  }

  /** SIGKILL, as a crash or an OOM kill would. */
  kill() {
    return this.#signal('SIGKILL');
  }

  /** SIGTERM, and SIGKILL if it is still running after `graceMs`. */
  async stop(graceMs = 10_000) {
    const force = setTimeout(() => this.#child?.kill('SIGKILL'), graceMs);
    try {
      return await this.terminate();
    } finally {
      clearTimeout(force);
    }
  }

  /**
   * @param {NodeJS.Signals} signal
   * @returns {Promise<Exit>}
   */
  async #signal(signal) {
    if (!this.running) return (await this.#exit) ?? { code: null, signal: null };
    this.#expectedExit = true;
    this.#child?.kill(signal);
    return /** @type {Promise<Exit>} */ (this.#exit);
  }
}

/**
 * The process of `service` from its tree's tools/services.js, its own settings under `env`.
 * @param {string} service
 * @param {Omit<ProcessOptions, 'main' | 'name' | 'url'>} options
 */
async function forService(service, options) {
  const entry = servicesOf(options.root).find((candidate) => candidate.name === service);
  if (!entry) throw new Error(`no service named ${service}`);
  const port = String(await freePort());
  const address = options.placement?.address ?? '127.0.0.1';
  return new PlatformProcess({
    ...options,
    name: service,
    main: entry.main,
    url: `http://${address}:${port}`,
    env: {
      ...entry.env,
      ...options.env,
      ...(service === 'gateway' ? { PORT: port } : { HEALTH_PORT: port }),
      ...(options.placement ? { HOST: '0.0.0.0' } : {}),
    },
  });
}

/**
 * Processes that stand or fall together, already spawned: `exited` rejects as soon as one of them
 * exits before `stop()`, which sends each SIGTERM (SIGKILL after 10 s). `processes` are plain
 * `{label, pid, url}` for CPU samplers and reports.
 * @param {PlatformProcess[]} members
 */
function group(members) {
  let stopping = false;
  /** @type {Promise<never>} */
  const exited = new Promise((_, reject) => {
    for (const member of members)
      void member.exited?.then((exit) => {
        if (!stopping)
          reject(new Error(`${member.label} exited (${exit.signal ?? exit.code}); see ${member.log}`));
      });
  });
  exited.catch(() => undefined);
  return {
    processes: members.map(({ label, pid, url }) => ({ label, pid: /** @type {number} */ (pid), url })),
    exited,
    /** Resolves once every member answers its readiness probe. */
    ready: async (timeoutMs = 60_000) => {
      await Promise.all(members.map((member) => member.ready(timeoutMs)));
    },
    async stop() {
      stopping = true;
      await Promise.all(members.map((member) => member.stop()));
    },
  };
}

/**
 * Spawns Node scripts of this checkout (`{label, main, env, url}`, `url` for `ready()` to probe),
 * their output appended to `logFile`.
 * @param {Array<{ label: string, main: string, env?: Record<string, string | undefined>, url?: string }>} entries
 * @param {string} logFile
 * @param {{ nodeArgs?: string[] }} [options]
 */
function startProcesses(entries, logFile, options = {}) {
  const members = entries.map((entry) => new PlatformProcess({ ...entry, ...options, logFile }));
  for (const member of members) member.spawn();
  return group(members);
}

/**
 * @typedef {object} PlatformSettings
 * @property {string} databaseUrl
 * @property {string} namespace its bus namespace and Redis key prefix
 * @property {string} natsUrl
 * @property {string} redisUrl
 * @property {string} logFile every process's output, appended
 * @property {Record<string, string>} [env] more settings, on top of these
 * @property {Record<string, string>} [labels] a label per service name (default: the name)
 * @property {boolean} [detached] see ProcessOptions
 * @property {string[]} [nodeArgs] see ProcessOptions
 */

/**
 * Every service and the gateway, as `npm start` runs them, on the database, bus namespace and
 * Redis given, without the default organization and without the gateway's shutdown drain (no load
 * balancer waits on it). Returns once they are spawned: `url` is the gateway's; `ready()` waits
 * for every readiness probe.
 * @param {PlatformSettings} settings
 */
async function spawnPlatform({
  databaseUrl,
  namespace,
  natsUrl,
  redisUrl,
  logFile,
  env,
  labels = {},
  ...options
}) {
  const settings = {
    DATABASE_URL: databaseUrl,
    BUS_NAMESPACE: namespace,
    NATS_URL: natsUrl,
    REDIS_URL: redisUrl,
    BOOTSTRAP_DEFAULT_ORG: 'false',
    READINESS_DRAIN_MS: '0',
    ...env,
  };
  /** @type {PlatformProcess[]} */
  const members = [];
  for (const { name } of servicesOf())
    members.push(await forService(name, { ...options, label: labels[name] ?? name, env: settings, logFile }));
  for (const member of members) member.spawn();
  const gateway = members.find((member) => member.name === 'gateway');
  return { url: gateway?.url ?? '', ...group(members) };
}

/**
 * spawnPlatform(), resolved once every process is ready; if one is not, all are stopped.
 * @param {PlatformSettings} settings
 */
async function startPlatform(settings) {
  const platform = await spawnPlatform(settings);
  try {
    await Promise.race([platform.exited, platform.ready(120_000)]);
  } catch (error) {
    await platform.stop();
    throw error;
  }
  return platform;
}

/**
 * Every process that is still running gets SIGKILL: for afterAll, whatever state a test left.
 * @param {Iterable<{ kill(): Promise<unknown> }>} processes
 */
async function killAll(processes) {
  await Promise.all([...processes].map((process) => process.kill().catch(() => undefined)));
}

/**
 * A host of tools/support/network-hosts.ts, for a NATS node to run on.
 * @typedef {object} NatsHost
 * @property {string} netns
 * @property {string} clusterAddress clients and the other nodes connect here
 * @property {string} clientAddress the monitoring port is reached here, even while the host is
 *   cut off from the cluster
 */

/** One node of a NATS cluster of the test's own, with JetStream, its store kept across restarts. */
class NatsNode {
  /** @type {import('node:child_process').ChildProcess | undefined} */
  #child;
  /** @type {Promise<unknown> | undefined} */
  #exit;

  /**
   * @param {string} name
   * @param {number} port
   * @param {number} monitorPort `/healthz` answers 200 here once the node's JetStream is current
   * @param {string} config
   * @param {NatsHost} [host] the node runs in its namespace, listening on its cluster address
   */
  constructor(name, port, monitorPort, config, host) {
    this.name = name;
    this.port = port;
    this.monitorPort = monitorPort;
    this.config = config;
    this.host = host;
  }

  get url() {
    return `nats://${this.host?.clusterAddress ?? '127.0.0.1'}:${this.port}`;
  }

  get #monitor() {
    return `http://${this.host?.clientAddress ?? '127.0.0.1'}:${this.monitorPort}`;
  }

  get running() {
    return !!this.#child && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  spawn() {
    const [command, args] = placed(
      this.host && { netns: this.host.netns, address: this.host.clientAddress },
      natsServer(),
      ['-c', this.config],
    );
    const child = spawn(command, args, { stdio: 'ignore' });
    this.#child = child;
    this.#exit = new Promise((resolve) => child.once('exit', resolve));
  }

  /** Starts it (again) and waits until it has caught up with the cluster's JetStream. */
  async start(timeoutMs = 30_000) {
    this.spawn();
    await this.healthy(timeoutMs);
  }

  /** Resolves once the node's JetStream is current (after a restart, or a partition healed). */
  async healthy(timeoutMs = 30_000) {
    await waitFor(async () => (await fetch(`${this.#monitor}/healthz`)).ok, {
      timeoutMs,
      intervalMs: 100,
      what: `NATS node ${this.name} healthy`,
    });
  }

  /** @returns {Promise<number>} how many clients are connected to this node now */
  async clientConnections() {
    const response = await fetch(`${this.#monitor}/varz`);
    return /** @type {{ connections: number }} */ (await response.json()).connections;
  }

  /** SIGTERM: the node closes its connections and leaves the cluster cleanly. */
  terminate() {
    return this.#signal('SIGTERM');
  }

  kill() {
    return this.#signal('SIGKILL');
  }

  /** @param {NodeJS.Signals} signal */
  async #signal(signal) {
    if (!this.running) return;
    this.#child?.kill(signal);
    await this.#exit;
  }
}

/**
 * `size` nats-server processes routed to each other in one cluster, JetStream on each (file store
 * under `dir`), listening on 127.0.0.1 only, or each on a host of its own when `hosts` are given
 * (one per node). Resolves once JetStream has a meta leader, i.e. a stream at `size` replicas can
 * be created.
 * @param {string} dir
 * @param {number} [size]
 * @param {NatsHost[]} [hosts]
 * @returns {Promise<NatsNode[]>}
 */
async function startNatsCluster(dir, size = 3, hosts) {
  /** @type {Array<{ client: number, cluster: number, monitor: number }>} */
  const ports = [];
  for (let i = 0; i < size; i += 1)
    ports.push({ client: await freePort(), cluster: await freePort(), monitor: await freePort() });
  /** @param {number} i */
  const address = (i) => hosts?.[i]?.clusterAddress ?? '127.0.0.1';
  const nodes = ports.map(({ client, cluster, monitor }, i) => {
    const name = `n${i + 1}`;
    const store = path.join(dir, name);
    fs.mkdirSync(store, { recursive: true });
    const routes = ports
      .map((other, j) => ({ other, j }))
      .filter(({ j }) => j !== i)
      .map(({ other, j }) => `nats-route://${address(j)}:${other.cluster}`)
      .join(', ');
    const config = path.join(dir, `${name}.conf`);
    fs.writeFileSync(
      config,
      [
        `server_name: ${name}`,
        `listen: ${address(i)}:${client}`,
        `http: ${hosts ? '0.0.0.0' : '127.0.0.1'}:${monitor}`,
        `jetstream { store_dir: "${store}" }`,
        // Routes pinged every second, dropped after two pings unanswered, as docs/operations.md
        // advises: a node cut off by the network loses its routes within 3 s.
        `cluster { name: licensing, listen: ${address(i)}:${cluster}, routes: [${routes}], ping_interval: "1s", ping_max: 2 }`,
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

/**
 * Resolves once the cluster's JetStream answers (a meta leader is elected).
 * @param {string} servers comma-separated
 */
async function waitForJetStream(servers, timeoutMs = 30_000) {
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

/**
 * A server of a test's own, for the tests that kill one. It keeps its data in a directory of its
 * own, so a restart finds what was saved.
 * @typedef {object} OwnServer
 * @property {string} url
 * @property {number} port
 * @property {string} dir
 * @property {() => Promise<void>} start starts (again) on the same port and data directory
 * @property {() => Promise<void>} kill SIGKILL, as a crash would
 * @property {() => void} freeze SIGSTOP: it stops answering but keeps its connections open, as a
 *   server behind a network that drops packets does
 * @property {() => void} thaw SIGCONT: it answers again
 * @property {() => Promise<void>} dispose kills it and removes its data directory
 */

/**
 * @param {string} name the server's name (and its command, unless `command` is given)
 * @param {(port: number) => string} url
 * @param {(port: number, dir: string) => string[]} args
 * @param {() => string} [command] the path of its executable
 * @returns {(port?: number) => Promise<OwnServer>}
 */
function ownServer(name, url, args, command = () => name) {
  return async (fixedPort) => {
    const port = fixedPort ?? (await freePort());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `licensing-${name}-`));
    /** @type {import('node:child_process').ChildProcess | undefined} */
    let child;
    /** @type {OwnServer} */
    const server = {
      url: url(port),
      port,
      dir,
      async start() {
        child = spawn(command(), args(port, dir), { stdio: 'ignore' });
        await waitFor(() => listening(port), { what: `${name} on port ${port}` });
      },
      async kill() {
        const running = child;
        if (!running || running.exitCode !== null || running.signalCode !== null) return;
        const exited = new Promise((resolve) => running.once('exit', resolve));
        running.kill('SIGKILL');
        await exited;
      },
      freeze() {
        child?.kill('SIGSTOP');
      },
      thaw() {
        child?.kill('SIGCONT');
      },
      async dispose() {
        server.thaw();
        await server.kill();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
    await server.start();
    return server;
  };
}

/**
 * Accepts a TCP connection: enough to know the server listens.
 * @param {number} port
 * @returns {Promise<boolean>}
 */
function listening(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A redis-server that snapshots only when told (SAVE), and loads its snapshot when it starts. */
const startOwnRedis = ownServer(
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
);

/** A nats-server with JetStream, its store in its own directory (kept across restarts). */
const startOwnNats = ownServer(
  'nats-server',
  (port) => `nats://127.0.0.1:${port}`,
  (port, dir) => ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir],
  natsServer,
);

/**
 * Runs a Node script to its end (a benchmark's smoke run, say) from `cwd`, and answers what it
 * printed, stdout and stderr together. Fails with that output if it exits with anything but 0.
 * @param {string[]} args
 * @param {string} cwd
 * @returns {Promise<string>}
 */
async function runNodeScript(args, cwd) {
  /** @type {string[]} */
  const output = [];
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd });
    child.stdout.on('data', (chunk) => output.push(chunk.toString()));
    child.stderr.on('data', (chunk) => output.push(chunk.toString()));
    child.on('exit', resolve);
  });
  const printed = output.join('');
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited ${code}:\n${printed}`);
  return printed;
}

module.exports = {
  root,
  freePort,
  build,
  createOrganization,
  servicesOf,
  PlatformProcess,
  startProcesses,
  spawnPlatform,
  startPlatform,
  killAll,
  NatsNode,
  startNatsCluster,
  waitForJetStream,
  startOwnRedis,
  startOwnNats,
  runNodeScript,
};
