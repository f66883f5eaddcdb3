/**
 * The relay and the platform together, as docs/relay.md walks a newcomer through them: the
 * platform as `npm start` runs it (compiled, one process per service), the vendor's steps with the
 * `licensing` command line and curl, the site's with `licensing-relay`, the relay a real process.
 *
 * 1,000 machines race for a floating license's 50 seats, the relay is killed with SIGKILL mid-race
 * and restarted on its data directory: no answered lease is lost, no machine holds two, never more
 * than 50. A client walks the trust chain (product key → relay file → relay key → signed answer).
 * A revocation list downloaded from the platform ends every lease; the relay's report counts each
 * lease once in the platform's analytics, however often it is uploaded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { verifyLicense, verifySignedAnswer } from '@licensing/license-verifier';
import {
  ApiClient,
  TEST_DATABASE_URL,
  TEST_NATS_URL,
  TEST_REDIS_URL,
  apiKeyWithScopes,
  build,
  deleteNamespaceStreams,
  startPlatform,
  uniqueNamespace,
  waitFor,
} from '@licensing/shared/testing';

const root = path.join(__dirname, '..');
const SEATS = 50;
const MACHINES = 1000;
const SITE = 'Plant 4, building B';

interface Lease {
  id: string;
  fingerprint: string;
  name: string | null;
  leased_at: string;
  last_heartbeat_at: string;
  expires_at: string;
}

interface Answer {
  status: number;
  text: string;
  signature: string | null;
  nonce: string;
}

/**
 * Runs a script in bash, in `cwd`, with `licensing` and `licensing-relay` as docs/relay.md uses
 * them. They are the compiled entry points of `npx licensing` and `npx licensing-relay` without
 * their build step: build() has compiled this checkout already, and the step would also build the
 * console, which neither command uses. Resolves to stdout; rejects with everything on a failure.
 */
function sh(script: string, cwd: string, env: Record<string, string>): Promise<string> {
  const prelude = [
    `licensing() { node -r "${root}/tools/register-paths.js" -e 'require("${root}/dist/apps/cli/src/index.js").runLicensingCli(process.argv.slice(1), { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t), env: process.env, interactive: false }).then((code) => { process.exitCode = code; })' -- "$@"; }`,
    `licensing-relay() { node -r "${root}/tools/register-paths.js" "${root}/dist/apps/relay/src/main.js" "$@"; }`,
  ].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', `${prelude}\n${script}`], {
      cwd,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${script}\nexited ${code}:\n${stdout}${stderr}`)),
    );
  });
}

describe('the relay against the platform, as docs/relay.md runs it', () => {
  const namespace = uniqueNamespace('relay');
  const dir = mkdtempSync(path.join(tmpdir(), 'relay-e2e-'));
  const data = path.join(dir, 'relay-data');
  let platform: Awaited<ReturnType<typeof startPlatform>> | undefined;
  let env: Record<string, string>;
  let admin: ApiClient;
  let productId: string;
  let licenseId: string;
  let keyPairId: string;
  let relay: ChildProcess | undefined;
  const relays: ChildProcess[] = [];

  afterAll(async () => {
    await Promise.all(
      relays.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }),
    );
    await platform?.stop();
    await deleteNamespaceStreams(namespace);
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * `licensing-relay start` as a process of its own (its PID is the relay's, for SIGKILL), on a
   * free port; resolves with its URL once it listens.
   */
  const startRelay = (args: string[]): Promise<string> => {
    const child = spawn(
      process.execPath,
      ['-r', './tools/register-paths.js', 'dist/apps/relay/src/main.js', 'start', ...args],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    relay = child;
    relays.push(child);
    let output = '';
    return new Promise((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
        if (url) resolve(url);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code, signal) =>
        reject(new Error(`the relay exited (${code ?? signal}): ${output}`)),
      );
    });
  };
  const relayArgs = (withFile: boolean) => [
    '--data',
    data,
    '--public-key',
    path.join(dir, 'product-key.json'),
    ...(withFile ? ['--file', path.join(dir, 'relay.lic')] : []),
    '--port',
    '0',
    '--log-level',
    'warn',
  ];

  /** A machine asks for a seat, with a fresh nonce; the answer as received. */
  const lease = async (url: string, fingerprint: string): Promise<Answer> => {
    const nonce = randomUUID();
    const response = await fetch(`${url}/v1/leases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'licensing-nonce': nonce },
      body: JSON.stringify({ fingerprint, name: `workstation ${fingerprint}` }),
    });
    return {
      status: response.status,
      text: await response.text(),
      signature: response.headers.get('licensing-signature'),
      nonce,
    };
  };
  const liveLeases = async (url: string): Promise<Lease[]> => {
    const response = await fetch(`${url}/v1/leases`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { leases: Lease[]; total: number };
    expect(body.total).toBe(body.leases.length);
    return body.leases;
  };
  const machine = (i: number) => `machine-${String(i).padStart(4, '0')}`;

  let url: string;
  /** Every lease answered 201 or 200 before the kill. */
  const answered = new Map<string, Lease>();

  it('starts the platform and the relay from a relay file the platform issued', async () => {
    build();
    platform = await startPlatform({
      databaseUrl: TEST_DATABASE_URL,
      namespace,
      natsUrl: TEST_NATS_URL,
      redisUrl: TEST_REDIS_URL,
      logFile: path.join(dir, 'platform.log'),
      env: { NODE_ENV: 'development', LOG_LEVEL: 'warn', BOOTSTRAP_DEFAULT_ORG: 'true' },
    });
    // What a newcomer copies from `npm start`'s first boot.
    const key = /export LICENSING_API_KEY=(lk_\S+)/.exec(
      readFileSync(path.join(dir, 'platform.log'), 'utf8'),
    )?.[1];
    expect(key).toBeDefined();
    env = { LICENSING_URL: platform.url, LICENSING_API_KEY: key! };
    admin = new ApiClient(platform.url, key);

    // The vendor's product and the customer's floating license of 50 seats.
    const keyPair = JSON.parse(await sh('licensing key-pairs create --name relay-e2e --json', dir, env));
    const product = JSON.parse(
      await sh(
        `licensing products create --name CAD --code cad-relay --key-pair-id ${keyPair.id} --json`,
        dir,
        env,
      ),
    );
    productId = product.id;
    keyPairId = keyPair.id;
    const license = JSON.parse(
      await sh(
        `licensing licenses create --product-id ${productId} --type floating --max-seats ${SEATS} --json`,
        dir,
        env,
      ),
    );
    licenseId = license.id;

    // The site creates its relay and sends the request to the vendor.
    await sh(`licensing-relay init --data relay-data --site "${SITE}" --out relay-request.json`, dir, {});
    const request = JSON.parse(readFileSync(path.join(dir, 'relay-request.json'), 'utf8'));
    expect(request).toMatchObject({ v: 1, kind: 'relay_request', site: SITE });

    // The vendor issues the relay file and fetches the product's public key, and sends both.
    const issued = JSON.parse(
      await sh(
        `licensing relay-files create ${licenseId} --request relay-request.json -o relay.lic --json`,
        dir,
        env,
      ),
    );
    expect(issued).toMatchObject({ license_id: licenseId, site: SITE, file: 'relay.lic' });
    await sh(
      `curl -fsS -H "Authorization: Bearer $LICENSING_API_KEY" "$LICENSING_URL/api/v1/products/${productId}/public-key" -o product-key.json`,
      dir,
      env,
    );

    // The site starts the relay with both.
    url = await startRelay(relayArgs(true));
    const status = await (await fetch(`${url}/v1/status`)).json();
    expect(status).toMatchObject({
      site: SITE,
      relay_file_id: issued.id,
      license_id: licenseId,
      product_id: productId,
      seats: SEATS,
      seats_in_use: 0,
      expired: false,
      revoked: false,
    });
  }, 60_000);

  it('keeps every answered lease through a SIGKILL mid-race, and never leases more than the seats', async () => {
    const child = relay!;
    const killed = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const statuses: number[] = [];
    // 1,000 machines at once; the relay is killed once 20 have their lease, the rest in flight.
    await Promise.all(
      Array.from({ length: MACHINES }, (_, i) =>
        lease(url, machine(i)).then(
          (answer) => {
            statuses.push(answer.status);
            if (answer.status === 201 || answer.status === 200) {
              const body = JSON.parse(answer.text) as Lease;
              answered.set(body.fingerprint, body);
            }
            if (answered.size >= 20 && child.exitCode === null && child.signalCode === null) {
              child.kill('SIGKILL');
            }
          },
          () => undefined, // The connection died with the process.
        ),
      ),
    );
    await killed;
    expect(child.signalCode).toBe('SIGKILL');
    expect(answered.size).toBeGreaterThanOrEqual(20);
    expect(answered.size).toBeLessThanOrEqual(SEATS);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    expect(new Set([...answered.values()].map((l) => l.id)).size).toBe(answered.size);

    // Restarted on the same data directory, without --file: every answered lease is there, intact.
    url = await startRelay(relayArgs(false));
    const after = await liveLeases(url);
    const byFingerprint = new Map(after.map((l) => [l.fingerprint, l]));
    expect(byFingerprint.size).toBe(after.length);
    for (const [fingerprint, held] of answered) expect(byFingerprint.get(fingerprint)).toEqual(held);
    expect(after.length).toBeLessThanOrEqual(SEATS);

    // The same 1,000 machines try again: those that hold a lease get it back (200), the free seats
    // go to exactly as many others (201), and the rest are refused.
    const again = await Promise.all(Array.from({ length: MACHINES }, (_, i) => lease(url, machine(i))));
    const count = (status: number) => again.filter((a) => a.status === status).length;
    expect(count(200)).toBe(after.length);
    expect(count(201)).toBe(SEATS - after.length);
    expect(count(409)).toBe(MACHINES - SEATS);
    for (const answer of again.filter((a) => a.status === 200)) {
      const body = JSON.parse(answer.text) as Lease;
      expect(body.id).toBe(byFingerprint.get(body.fingerprint)!.id);
    }
    const full = await liveLeases(url);
    expect(full).toHaveLength(SEATS);
    expect(new Set(full.map((l) => l.fingerprint)).size).toBe(SEATS);
    expect(await (await fetch(`${url}/v1/status`)).json()).toMatchObject({ seats_in_use: SEATS });

    // A client checks an answer: the relay file with the product key it ships with, the relay's
    // key from that file, the answer's signature with that key and the nonce it sent.
    const productKey = JSON.parse(readFileSync(path.join(dir, 'product-key.json'), 'utf8'));
    const statusNonce = randomUUID();
    const statusAnswer = await fetch(`${url}/v1/status`, { headers: { 'licensing-nonce': statusNonce } });
    const statusText = await statusAnswer.text();
    const status = JSON.parse(statusText);
    const file = await verifyLicense(status.relay_file, productKey.public_key, { productId });
    expect(file.errors).toEqual([]);
    expect(file.valid).toBe(true);
    const claim = (file.license!.claims as unknown as { relay: { id: string; public_key: string } }).relay;
    expect(claim.id).toBe(status.relay_file_id);
    const relayKey = claim.public_key;
    const statusCheck = await verifySignedAnswer(
      { body: statusText, signature: statusAnswer.headers.get('licensing-signature'), nonce: statusNonce },
      relayKey,
    );
    expect(statusCheck).toMatchObject({ valid: true, errors: [] });
    const leased = again.find((a) => a.status === 201) ?? again.find((a) => a.status === 200)!;
    const answer = { body: leased.text, signature: leased.signature, nonce: leased.nonce };
    expect(await verifySignedAnswer(answer, relayKey)).toMatchObject({ valid: true, errors: [] });
    // The product key cannot stand in for the relay's, nor an answer for another request.
    expect((await verifySignedAnswer(answer, productKey.public_key)).valid).toBe(false);
    const replayed = await verifySignedAnswer({ ...answer, nonce: randomUUID() }, relayKey);
    expect(replayed.errors.map((e) => e.code)).toEqual(['nonce_mismatch']);
  }, 90_000);

  it('ends every lease when the revocation list from the platform names the license', async () => {
    const before = await liveLeases(url);
    expect(before).toHaveLength(SEATS);
    await sh(`licensing licenses revoke ${licenseId}`, dir, env);
    await sh(
      `curl -fsS -H "Authorization: Bearer $LICENSING_API_KEY" "$LICENSING_URL/api/v1/products/${productId}/revocation-list" -o revocation-list.jwt`,
      dir,
      env,
    );
    const imported = await sh(
      'licensing-relay revocations import revocation-list.jwt --data relay-data --public-key product-key.json',
      dir,
      {},
    );
    expect(imported).toMatch(/the license is revoked, 50 lease\(s\) ended/);

    // The running relay: no live lease, no new one, no heartbeat.
    expect(await liveLeases(url)).toEqual([]);
    const refused = await lease(url, 'machine-new');
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text)).toMatchObject({ code: 'license_revoked' });
    const heartbeat = await fetch(`${url}/v1/leases/${before[0]!.id}/heartbeat`, { method: 'POST' });
    expect(heartbeat.status).toBe(403);
    expect(await heartbeat.json()).toMatchObject({ code: 'license_revoked' });
    expect(await (await fetch(`${url}/v1/status`)).json()).toMatchObject({ revoked: true, seats_in_use: 0 });
  }, 30_000);

  it("counts each of the relay's leases once in the platform's analytics, however often uploaded", async () => {
    await sh('licensing-relay report export --data relay-data --out report.jws', dir, {});
    const imported = JSON.parse(await sh('licensing relay-reports import report.jws --json', dir, env));
    expect(imported).toMatchObject({ leases: SEATS, counted: SEATS });

    const usageOf = async (id: string) => (await admin.get(`/api/v1/licenses/${id}/usage?per_page=100`)).body;
    await waitFor(async () => (await usageOf(licenseId)).syncs === SEATS, {
      timeoutMs: 20_000,
      what: 'every lease to be counted',
    });

    // The same file again, and a new export of the same leases: nothing more is counted.
    await sh('licensing relay-reports import report.jws', dir, env);
    await sh(
      'licensing-relay report export --data relay-data --out report-2.jws && licensing relay-reports import report-2.jws',
      dir,
      env,
    );
    // A marker: a sync of another product's license, counted after the uploads above.
    const other = await admin.post('/api/v1/products', {
      name: 'Marker',
      code: 'marker',
      key_pair_id: keyPairId,
    });
    expect(other.status).toBe(201);
    const marker = await admin.post('/api/v1/licenses', { product_id: other.body.id });
    expect(marker.status).toBe(201);
    const client = (await apiKeyWithScopes(admin, ['client'])).api;
    expect((await client.post('/api/v1/licenses/sync', { license_serial: marker.body.serial })).status).toBe(
      200,
    );
    await waitFor(async () => (await usageOf(marker.body.id)).syncs === 1, { what: 'the marker sync' });

    const usage = await usageOf(licenseId);
    expect(usage.syncs).toBe(SEATS);
    expect(usage.total).toBe(SEATS);
    expect(usage.peak_seats_in_use).toBe(SEATS);
    const report = JSON.parse(
      Buffer.from(readFileSync(path.join(dir, 'report.jws'), 'utf8').split('.')[1]!, 'base64url').toString(),
    );
    expect(report.leases).toHaveLength(SEATS);
    // The revocation ended every lease: the report says when.
    expect(report.leases.filter((l: { ended_at: string | null }) => l.ended_at === null)).toEqual([]);
    expect(new Set(report.leases.map((l: Lease) => l.fingerprint)).size).toBe(SEATS);
    expect(usage.fingerprints.map((f: { fingerprint: string }) => f.fingerprint).sort()).toEqual(
      report.leases.map((l: Lease) => l.fingerprint).sort(),
    );

    const day = 86_400_000;
    const range = `from=${new Date(Date.now() - day).toISOString()}&to=${new Date(Date.now() + day).toISOString()}`;
    const analytics = await admin.get(
      `/api/v1/analytics/usage?${range}&interval=hour&product_id=${productId}`,
    );
    expect(analytics.status).toBe(200);
    expect(analytics.body.buckets.reduce((sum: number, b: { syncs: number }) => sum + b.syncs, 0)).toBe(
      SEATS,
    );
  }, 60_000);
});
