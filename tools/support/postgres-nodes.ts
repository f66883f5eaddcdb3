/**
 * PostgreSQL servers of a test's own, for the tests that fail a database over: a primary made by
 * initdb and standbys streaming from a node (pg_basebackup -R), each on a free port, its data and
 * log under the test's directory. When the test runs as root they run as the postgres user
 * (PostgreSQL refuses root). Only these servers are ever stopped, through their data directory
 * (pg_ctl), never the machine's own cluster.
 */
import { execFile } from 'node:child_process';
import { chownSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from '@licensing/shared/testing';

const run = promisify(execFile);

/** The binaries of the newest PostgreSQL installed the Debian way (/usr/lib/postgresql/<major>/bin). */
function binaries(): string {
  const majors = readdirSync('/usr/lib/postgresql')
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  if (majors.length === 0) throw new Error('no PostgreSQL under /usr/lib/postgresql');
  return `/usr/lib/postgresql/${majors[0]}/bin`;
}

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL program as the user that owns the data (postgres, when the test is root). */
async function pg(program: string, args: string[]): Promise<void> {
  const path = join(binaries(), program);
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
  try {
    await run(file, argv, { timeout: 60_000 });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${program} ${args.join(' ')} failed: ${stderr || stdout || String(error)}`);
  }
}

/** Gives `dir` to the postgres user when the test is root, so the servers can write in it. */
export function ownedByPostgres(dir: string): string {
  if (asRoot) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  return dir;
}

function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new Error('no postgres user');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

export class PostgresNode {
  private constructor(
    /** Also its `cluster_name`: the application name its walreceiver reports to a primary. */
    readonly name: string,
    readonly port: number,
    private readonly dir: string,
  ) {}

  get dataDir(): string {
    return join(this.dir, this.name);
  }

  get logFile(): string {
    return join(this.dir, `${this.name}.log`);
  }

  /** A new, empty cluster (not started), with trust authentication on 127.0.0.1 only. */
  static async init(dir: string, name: string): Promise<PostgresNode> {
    const node = new PostgresNode(name, await freePort(), dir);
    await pg('initdb', ['-D', node.dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    return node;
  }

  /**
   * A standby of this node (not started): a base backup whose configuration streams from here
   * (`standby.signal`, `primary_conninfo`), or through `via`, a port that leads here (a proxy
   * the test can cut). It copies this node's settings, those of ALTER SYSTEM included.
   */
  async standby(name: string, via = this.port): Promise<PostgresNode> {
    const node = new PostgresNode(name, await freePort(), this.dir);
    await pg('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(via), '-U', 'postgres'],
      ...['-D', node.dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
    ]);
    return node;
  }

  /** Starts it and waits until it accepts connections. */
  async start(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      `-c cluster_name=${this.name}`,
    ].join(' ');
    await pg('pg_ctl', ['start', '-w', '-t', '60', '-D', this.dataDir, '-l', this.logFile, '-o', options]);
  }

  /** Stops it the way a crash does (SIGQUIT to every process: no shutdown checkpoint, no last WAL sent). */
  async crash(): Promise<void> {
    await pg('pg_ctl', ['stop', '-w', '-m', 'immediate', '-D', this.dataDir]);
  }

  /** Ends recovery: a standby becomes a primary that accepts writes; resolves once it does. */
  async promote(): Promise<void> {
    await pg('pg_ctl', ['promote', '-w', '-t', '60', '-D', this.dataDir]);
  }

  /** For afterAll: stops it if it runs, whatever state a test left it in. */
  async stop(): Promise<void> {
    await this.crash().catch(() => undefined);
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** One statement on a connection of its own. */
  async query<T = Record<string, unknown>>(
    text: string,
    params: unknown[] = [],
    database?: string,
  ): Promise<T[]> {
    const client = new Client({ connectionString: this.url(database) });
    await client.connect();
    try {
      return (await client.query(text, params)).rows as T[];
    } finally {
      await client.end();
    }
  }
}
