// The relay as a real process (`licensing-relay start`, from the sources): seats stay exact under a
// burst of concurrent requests, and a `kill -9` in the middle of one loses no answered lease.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { initRelay } from './relay';
import { productFixture, relayFile, tempDir } from './testing/relay-fixtures';

const ROOT = path.join(__dirname, '../../..');
const SITE = 'Plant 4';
const SEATS = 50;
const REQUESTS = 1000;
// Each answered lease waits for its fsync (synchronous = FULL): a loaded machine's disk sets the pace.
const TIMEOUT_MS = 90_000;

interface Lease {
  id: string;
  fingerprint: string;
  leased_at: string;
}

describe('the relay process', () => {
  let dir: string;
  let remove: () => void;
  let keyFile: string;
  let fileFile: string;
  let child: ChildProcess | undefined;

  beforeEach(async () => {
    ({ dir, remove } = tempDir());
    const product = await productFixture();
    const { public_key } = await initRelay(path.join(dir, 'data'), SITE);
    keyFile = path.join(dir, 'product.pem');
    fileFile = path.join(dir, 'relay.lic');
    writeFileSync(keyFile, product.publicKeyPem);
    writeFileSync(fileFile, relayFile(product, { relayPublicKey: public_key, site: SITE, seats: SEATS }));
  });

  /** Every process a test started, the last one also as `child`. */
  const children: ChildProcess[] = [];

  afterEach(async () => {
    await Promise.all(
      children.splice(0).map(async (started) => {
        if (started.exitCode !== null || started.signalCode !== null) return;
        const exited = new Promise((resolve) => started.once('exit', resolve));
        started.kill('SIGKILL');
        await exited;
      }),
    );
    child = undefined;
    remove();
  });

  /** `licensing-relay start` on a free port; resolves with its URL once it listens. */
  const start = (withFile: boolean): Promise<string> => {
    const args = ['start', '--data', path.join(dir, 'data'), '--public-key', keyFile, '--port', '0'];
    if (withFile) args.push('--file', fileFile);
    const started = spawn(
      process.execPath,
      ['-r', '@swc-node/register', 'apps/relay/src/main.ts', ...args, '--log-level', 'warn'],
      {
        cwd: ROOT,
        env: { ...process.env, SWC_NODE_PROJECT: path.join(ROOT, 'tsconfig.json') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = started;
    children.push(started);
    let output = '';
    return new Promise((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
        if (url) resolve(url);
      };
      started.stdout!.on('data', onData);
      started.stderr!.on('data', onData);
      started.once('exit', (code) => reject(new Error(`the relay exited (${code}): ${output}`)));
    });
  };

  const lease = async (url: string, fingerprint: string) => {
    const response = await fetch(`${url}/v1/leases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fingerprint }),
    });
    return { status: response.status, body: (await response.json()) as Lease & { code?: string } };
  };
  const live = async (url: string) =>
    ((await (await fetch(`${url}/v1/leases`)).json()) as { leases: Lease[]; total: number }).leases;

  it(
    `answers ${REQUESTS} concurrent lease requests for ${SEATS} seats with exactly ${SEATS} leases`,
    async () => {
      const url = await start(true);
      const answers = await Promise.all(
        Array.from({ length: REQUESTS }, (_, i) => lease(url, `machine-${i}`)),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(SEATS);
      expect(statuses.filter((s) => s === 409)).toHaveLength(REQUESTS - SEATS);
      expect(answers.filter((a) => a.status === 409).every((a) => a.body.code === 'no_seats')).toBe(true);
      const leased = answers.filter((a) => a.status === 201).map((a) => a.body.id);
      expect(new Set(leased).size).toBe(SEATS);
      expect((await live(url)).map((l) => l.id).sort()).toEqual([...leased].sort());

      // SIGTERM stops it cleanly: exit code 0.
      const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
      child!.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
    TIMEOUT_MS,
  );

  it(
    'keeps every answered lease through a kill -9 in the middle of a burst, and never more than the seats',
    async () => {
      const url = await start(true);
      const answered: Lease[] = [];
      const killed = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
      // Every request is sent; the process is killed once 20 leases are answered, with the rest in flight.
      const requests = Array.from({ length: REQUESTS / 2 }, (_, i) =>
        lease(url, `machine-${i}`).then(
          (answer) => {
            if (answer.status === 201) answered.push(answer.body);
            if (answered.length === 20 && child?.exitCode === null) child.kill('SIGKILL');
          },
          () => undefined, // The connection died with the process.
        ),
      );
      await Promise.all(requests);
      await killed;
      expect(answered.length).toBeGreaterThanOrEqual(20);
      expect(answered.length).toBeLessThanOrEqual(SEATS);

      // The database is whole, and holds every answered lease.
      const db = new Database(path.join(dir, 'data', 'relay.db'), { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        db.close();
      }
      const restarted = await start(false);
      const after = await live(restarted);
      const byId = new Map(after.map((l) => [l.id, l]));
      for (const lease of answered) expect(byId.get(lease.id)).toEqual(lease);
      expect(after.length).toBeLessThanOrEqual(SEATS);
      expect(new Set(after.map((l) => l.fingerprint)).size).toBe(after.length);

      // The seats left are leased exactly once more: never more than the seats in all.
      const more = await Promise.all(Array.from({ length: 200 }, (_, i) => lease(restarted, `late-${i}`)));
      expect(more.filter((a) => a.status === 201)).toHaveLength(SEATS - after.length);
      expect(await live(restarted)).toHaveLength(SEATS);
    },
    TIMEOUT_MS,
  );

  it(
    'shares the seats exactly between two processes on one data directory (BEGIN IMMEDIATE)',
    async () => {
      const first = await start(true);
      const second = await start(false);
      const answers = await Promise.all(
        Array.from({ length: 400 }, (_, i) => lease(i % 2 === 0 ? first : second, `machine-${i}`)),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(SEATS);
      expect(answers.filter((a) => a.status !== 201 && a.status !== 409)).toEqual([]);
      expect(await live(first)).toHaveLength(SEATS);
    },
    TIMEOUT_MS,
  );
});
