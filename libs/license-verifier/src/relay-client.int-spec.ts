// RelayClient against a real relay process (`licensing-relay start`, from the sources), with a
// relay file signed by a product key of the test's own: a lease, its heartbeat and release, no
// seats, a revocation, a tampered answer, and a relay file of another product. The relay imports
// this library, so the relays come from a process of their own: the relay's test launcher
// (apps/relay/src/testing/relay-fixture-main.ts), which prints their addresses.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { LicenseClientError } from './license-client';
import { RelayClient } from './relay-client';

const ROOT = path.join(__dirname, '../../..');
const TIMEOUT_MS = 30_000;

interface Relays {
  url: string;
  publicKey: string;
  productId: string;
  serial: string;
  proxyUrl: string;
  foreignUrl: string;
  revokeCommand: { argv: string[]; cwd: string; env: Record<string, string> };
}

/** The launcher, and the addresses it prints once everything listens. */
function startRelays(): { child: ChildProcess; ready: Promise<Relays> } {
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', 'apps/relay/src/testing/relay-fixture-main.ts'],
    {
      cwd: ROOT,
      env: { ...process.env, SWC_NODE_PROJECT: path.join(ROOT, 'tsconfig.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  let errors = '';
  const ready = new Promise<Relays>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((text) => text.startsWith('{'));
      if (line && output.includes('\n')) resolve(JSON.parse(line) as Relays);
    });
    child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`the relay launcher exited (${code}): ${errors}`)));
  });
  return { child, ready };
}

describe('RelayClient against a relay process', () => {
  let relay: Relays;
  let launcher: ChildProcess | undefined;

  beforeAll(async () => {
    const started = startRelays();
    launcher = started.child;
    relay = await started.ready;
  }, TIMEOUT_MS);
  afterAll(async () => {
    if (!launcher || launcher.exitCode !== null || launcher.signalCode !== null) return;
    const exited = new Promise((resolve) => launcher!.once('exit', resolve));
    launcher.kill('SIGTERM');
    await exited;
  });

  const client = (fingerprint: string, url = relay.url, publicKey = relay.publicKey) =>
    new RelayClient({ relayUrl: url, publicKey, fingerprint });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => (error instanceof LicenseClientError ? error.code : String(error)),
    );

  it(
    'leases, keeps the lease with the timer heartbeat, gives the seat back, and refuses a third machine',
    async () => {
      const first = client('machine-1');
      expect((await first.validate()).status).toBe('no_activation');
      const lease = await first.activate();
      expect(lease.fingerprint).toBe('machine-1');
      expect(await first.validate()).toMatchObject({ valid: true, status: 'ok', offline: false });
      const status = await first.status();
      expect(status).toMatchObject({ seats: 2, seats_in_use: 1, serial: relay.serial, revoked: false });
      expect(status.product_id).toBe(relay.productId);

      // Without heartbeats the lease lapses after 2 s; the timer keeps it.
      first.startHeartbeat();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(first.heartbeatError).toBeUndefined();
      expect(await first.validate()).toMatchObject({ valid: true, status: 'ok' });
      const renewed = await first.heartbeat();
      expect(renewed.id).toBe(lease.id);
      expect(Date.parse(renewed.expires_at)).toBeGreaterThan(Date.parse(lease.expires_at));

      const second = client('machine-2');
      await second.activate();
      const third = client('machine-3');
      expect(await refusal(third.activate())).toBe('no_seats');
      expect(await third.validate()).toMatchObject({ valid: false, status: 'no_seats' });

      // Released: the seat is free at once, and the released client holds nothing.
      await first.deactivate();
      expect(await first.validate()).toMatchObject({ valid: false, status: 'no_activation' });
      expect(await refusal(first.heartbeat())).toBe('not_activated');
      await third.activate();
      expect((await third.validate()).status).toBe('ok');
      await second.deactivate();
      await third.deactivate();
    },
    TIMEOUT_MS,
  );

  it(
    'refuses an answer changed on the way, though its status and relay file are genuine',
    async () => {
      const fooled = client('machine-proxy', relay.proxyUrl);
      expect((await fooled.status()).serial).toBe(relay.serial);
      expect(await refusal(fooled.activate())).toBe('unverified_answer');
      expect(fooled.currentLease).toBeUndefined();
      expect((await fooled.validate()).valid).toBe(false);
    },
    TIMEOUT_MS,
  );

  it(
    'refuses a relay whose file another product signed, and one for another product id',
    async () => {
      const fooled = client('machine-foreign', relay.foreignUrl);
      expect(await refusal(fooled.validate())).toBe('relay_file_invalid');
      expect(await refusal(fooled.activate())).toBe('relay_file_invalid');

      const pinned = new RelayClient({
        relayUrl: relay.url,
        publicKey: relay.publicKey,
        productId: '00000000-0000-4000-8000-000000000000',
        fingerprint: 'machine-pinned',
      });
      expect(await refusal(pinned.activate())).toBe('product_mismatch');
    },
    TIMEOUT_MS,
  );

  it(
    'reports a revoked license and refuses its heartbeats and leases',
    async () => {
      const machine = client('machine-revoked');
      await machine.activate();
      const { argv, cwd, env } = relay.revokeCommand;
      await promisify(execFile)(argv[0]!, argv.slice(1), { cwd, env: { ...process.env, ...env } });
      expect(await machine.validate()).toMatchObject({ valid: false, status: 'revoked' });
      expect(await refusal(machine.heartbeat())).toBe('license_revoked');
      expect(await refusal(client('machine-late').activate())).toBe('license_revoked');
    },
    TIMEOUT_MS,
  );
});
