// The command line beside a running relay: revocation lists and usage reports cross the air gap as
// files, and the running server sees an import on its next request.
import { createPublicKey, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { decodeJws, verifyJwsSignature } from '@licensing/license-format';
import { startRelay, type RunningRelay } from './relay';
import { runRelayCli } from './relay-cli';
import { parseProductKey } from './relay-file/product-key';
import { MAX_REPORT_LEASE_BYTES, exportReport, type RelayReport } from './reports/relay-report';
import { RelayStore } from './store/relay-store';
import {
  productFixture,
  relayFile,
  revocationList,
  tempDir,
  type ProductFixture,
} from './testing/relay-fixtures';

const SITE = 'Plant 4';
const SERIAL = 'LIC-CAD-0000000000000001';

interface LeaseBody {
  id: string;
  fingerprint: string;
  leased_at: string;
  code?: string;
}

/** Runs `licensing-relay <argv>` in this process. */
async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runRelayCli(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    stopped: () => Promise.resolve(),
  });
  return { code, stdout, stderr };
}

describe('licensing-relay', () => {
  let product: ProductFixture;
  let dir: string;
  let data: string;
  let keyFile: string;
  let remove: () => void;
  let relay: RunningRelay | undefined;
  let relayKey: string;
  let relayFileId: string;

  beforeAll(async () => {
    product = await productFixture();
  });

  beforeEach(async () => {
    ({ dir, remove } = tempDir());
    data = path.join(dir, 'data');
    keyFile = path.join(dir, 'product.pem');
    writeFileSync(keyFile, product.publicKeyPem);
    const init = await cli(['init', '--data', data, '--site', SITE]);
    expect(init.code).toBe(0);
    const request = JSON.parse(init.stdout);
    expect(request).toEqual({
      v: 1,
      kind: 'relay_request',
      site: SITE,
      public_key: expect.stringContaining('BEGIN PUBLIC KEY'),
    });
    relayKey = request.public_key;
    relayFileId = randomUUID();
  });

  afterEach(async () => {
    await relay?.close();
    relay = undefined;
    remove();
  });

  const startServing = async (seats = 3) => {
    relay = await startRelay({
      dataDir: data,
      productKey: await parseProductKey(product.publicKeyPem),
      relayFile: relayFile(product, {
        relayPublicKey: relayKey,
        site: SITE,
        seats,
        relayFileId,
        serial: SERIAL,
      }),
      port: 0,
      host: '127.0.0.1',
      leaseTtlSeconds: 600,
      logLevel: 'silent',
    });
    return relay;
  };
  const lease = async (fingerprint: string) => {
    const response = await fetch(`${relay!.url}/v1/leases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fingerprint }),
    });
    return { status: response.status, body: (await response.json()) as LeaseBody };
  };
  const importList = (jws: string) => {
    const file = path.join(dir, `list-${randomUUID()}.jwt`);
    writeFileSync(file, jws);
    return cli(['revocations', 'import', file, '--data', data, '--public-key', keyFile]);
  };

  it('prints the relay request again', async () => {
    const again = await cli(['request', '--data', data]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      v: 1,
      kind: 'relay_request',
      site: SITE,
      public_key: relayKey,
    });
    expect((await cli(['request', '--data', path.join(dir, 'none')])).stderr).toMatch(
      /run licensing-relay init/,
    );
  });

  it('refuses to init twice, and a bad site', async () => {
    const again = await cli(['init', '--data', data, '--site', SITE]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists/);
    const bad = await cli(['init', '--data', path.join(dir, 'other'), '--site', 'a\u0007b']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--site/);
  });

  it('refuses to start with a refused relay file, exit code 1 and the reason', async () => {
    const other = await productFixture();
    const file = path.join(dir, 'relay.lic');
    writeFileSync(file, relayFile(other, { relayPublicKey: relayKey, site: SITE }));
    const started = await cli([
      'start',
      '--data',
      data,
      '--public-key',
      keyFile,
      '--file',
      file,
      '--port',
      '0',
    ]);
    expect(started).toMatchObject({ code: 1, stdout: '' });
    expect(started.stderr).toMatch(/relay file refused: signature_invalid/);
    const none = await cli(['start', '--data', data, '--public-key', keyFile, '--port', '0']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no relay file is loaded/);
  });

  it('ends every lease at once when the list names the serial, refuses new ones, and refuses a stale list', async () => {
    await startServing();
    const held = (await lease('machine-1')).body;
    await lease('machine-2');

    const clean = await importList(
      revocationList(product, { version: 3, entries: [{ serial: 'LIC-CAD-OTHER', status: 'revoked' }] }),
    );
    expect(clean).toMatchObject({ code: 0 });
    expect(clean.stdout).toMatch(/version 3 imported: the license is not revoked/);
    expect((await lease('machine-3')).status).toBe(201);

    const revoked = await importList(
      revocationList(product, { version: 5, entries: [{ serial: SERIAL, status: 'revoked' }] }),
    );
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(/the license is revoked, 3 lease\(s\) ended/);
    // The running relay sees it on its next request.
    const refused = await lease('machine-4');
    expect(refused).toMatchObject({ status: 403, body: { code: 'license_revoked' } });
    const beat = await fetch(`${relay!.url}/v1/leases/${held.id}/heartbeat`, { method: 'POST' });
    expect(beat.status).toBe(403);
    const listed = await (await fetch(`${relay!.url}/v1/leases`)).json();
    expect(listed).toEqual({ leases: [], total: 0 });
    const status = await (await fetch(`${relay!.url}/v1/status`)).json();
    expect(status).toMatchObject({ revoked: true, seats_in_use: 0 });

    // An older list would un-revoke the license: refused, and nothing changes.
    const stale = await importList(revocationList(product, { version: 4 }));
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/revocation list refused: version_regression/);
    expect((await lease('machine-4')).status).toBe(403);
    // A list of another product, or signed by another key, is refused too.
    const foreign = await importList(revocationList(product, { version: 9, productId: randomUUID() }));
    expect(foreign.stderr).toMatch(/product_mismatch/);
    const forged = await importList(
      revocationList(await productFixture(), { version: 9, productId: product.productId }),
    );
    expect(forged.stderr).toMatch(/signature_invalid/);

    // A newer list that no longer names the serial (reinstated) lifts the refusal.
    const reinstated = await importList(revocationList(product, { version: 6 }));
    expect(reinstated.code).toBe(0);
    expect((await lease('machine-4')).status).toBe(201);

    // The report shows the leases the revocation ended as ended.
    const report = decodeJws<RelayReport>(
      (await cli(['report', 'export', '--data', data])).stdout.trim(),
    ).payload;
    const ended = new Map(report.leases.map((l) => [l.fingerprint, l.ended_at]));
    for (const machine of ['machine-1', 'machine-2', 'machine-3'])
      expect(ended.get(machine)).toEqual(expect.any(String));
    expect(ended.get('machine-4')).toBeNull();
  });

  it('reports a lapsed lease as ended when it lapsed, before any request has marked it', async () => {
    await startServing(2);
    const held = (await lease('machine-a')).body as LeaseBody & { expires_at: string };
    const store = RelayStore.open(data);
    try {
      const later = exportReport(store, Date.parse(held.expires_at) + 1000);
      expect(later.report.leases).toEqual([
        expect.objectContaining({ id: held.id, ended_at: held.expires_at }),
      ]);
      expect(exportReport(store, Date.now()).report.leases[0]!.ended_at).toBeNull();
    } finally {
      store.close();
    }
  });

  it('exports a signed report of every lease, verifiable with the relay key', async () => {
    await startServing(2);
    const a = (await lease('machine-a')).body;
    const b = (await lease('machine-b')).body;
    await fetch(`${relay!.url}/v1/leases/${a.id}`, { method: 'DELETE' });
    const c = (await lease('machine-c')).body;

    const out = path.join(dir, 'report.jws');
    const exported = await cli(['report', 'export', '--data', data, '--out', out]);
    expect(exported.code).toBe(0);
    const jws = readFileSync(out, 'utf8').trim();
    const decoded = decodeJws<RelayReport>(jws);
    expect(decoded.header).toEqual({ alg: 'EdDSA', typ: 'relay-report+jws', kid: relayFileId });
    expect(verifyJwsSignature(decoded, createPublicKey(relayKey))).toBe(true);
    expect(verifyJwsSignature(decoded, createPublicKey(product.publicKeyPem))).toBe(false);
    const report = decoded.payload;
    expect(report).toEqual({
      v: 1,
      kind: 'relay_report',
      report_id: expect.stringMatching(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      ),
      relay_file_id: relayFileId,
      site: SITE,
      serial: SERIAL,
      product_id: product.productId,
      created_at: expect.any(String),
      leases: [
        {
          id: a.id,
          fingerprint: 'machine-a',
          leased_at: a.leased_at,
          ended_at: expect.any(String),
          seats_in_use: 1,
        },
        { id: b.id, fingerprint: 'machine-b', leased_at: b.leased_at, ended_at: null, seats_in_use: 2 },
        { id: c.id, fingerprint: 'machine-c', leased_at: c.leased_at, ended_at: null, seats_in_use: 2 },
      ],
    });
    // A tampered report fails.
    const [header, , signature] = jws.split('.');
    const forged = Buffer.from(JSON.stringify({ ...report, leases: [] })).toString('base64url');
    expect(verifyJwsSignature(decodeJws(`${header}.${forged}.${signature}`), createPublicKey(relayKey))).toBe(
      false,
    );

    // --since limits the report to the leases started from then on.
    const since = await cli(['report', 'export', '--data', data, '--since', c.leased_at]);
    const later = decodeJws<RelayReport>(since.stdout.trim()).payload.leases;
    expect(later.map((l) => l.id)).toContain(c.id);
    expect(later.every((l) => l.leased_at >= c.leased_at)).toBe(true);
    expect((await cli(['report', 'export', '--data', data, '--since', 'yesterday'])).code).toBe(1);
  });

  it('splits a report past its limit and says where the next one starts', async () => {
    await startServing(5);
    for (const machine of ['m1', 'm2', 'm3', 'm4', 'm5']) await lease(machine);
    const store = RelayStore.open(data);
    try {
      const first = exportReport(store, Date.now(), undefined, 3);
      expect(first.report.leases.map((l) => l.fingerprint)).toEqual(['m1', 'm2', 'm3']);
      expect(first.next_since).toBe(new Date(store.liveLeaseOf('m4')!.leased_at).toISOString());
      const rest = exportReport(store, Date.now(), Date.parse(first.next_since!), 3);
      expect(rest.report.leases.map((l) => l.fingerprint)).toEqual(expect.arrayContaining(['m4', 'm5']));
      expect(rest.next_since).toBeNull();
      // By size too: leases of ~150 bytes, at most 400 bytes of them, split two by two.
      const bySize = exportReport(store, Date.now(), undefined, 10, 400);
      expect(bySize.report.leases.map((l) => l.fingerprint)).toEqual(['m1', 'm2']);
      expect(bySize.next_since).toBe(new Date(store.liveLeaseOf('m3')!.leased_at).toISOString());
    } finally {
      store.close();
    }
  });

  it("keeps every report under the platform's 1 MiB request limit", () => {
    // The leases' bytes, plus the first lease past the cap at its largest (a fingerprint of 256
    // three-byte characters), plus the report's other fields; base64url adds a third.
    const payload = MAX_REPORT_LEASE_BYTES + 256 * 3 + 200 + 1024;
    expect(Math.ceil((payload * 4) / 3) + 1024).toBeLessThan(1024 * 1024);
  });

  it('prints the status from the database', async () => {
    await startServing(2);
    await lease('machine-a');
    const status = await cli(['status', '--data', data, '--json']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      site: SITE,
      serial: SERIAL,
      seats: 2,
      seats_in_use: 1,
      revoked: false,
      revocation_list_version: null,
    });
  });
});
