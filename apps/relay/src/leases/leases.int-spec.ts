// The lease API over HTTP, in-process, with the relay's clock in the test's hands.
import { randomUUID } from 'node:crypto';
import { generateKeyPair } from '@licensing/license-format';
import { verifySignedAnswer } from '@licensing/license-verifier';
import { initRelay, startRelay, type RunningRelay } from '../relay';
import { parseProductKey, type ProductKey } from '../relay-file/product-key';
import { productFixture, relayFile, tempDir, type ProductFixture } from '../testing/relay-fixtures';

const SITE = 'Plant 4';
const TTL_S = 600;

describe('the lease API', () => {
  let product: ProductFixture;
  let productKey: ProductKey;
  let dir: string;
  let remove: () => void;
  let relayKey: string;
  let relay: RunningRelay;
  let now: number;

  beforeAll(async () => {
    product = await productFixture();
    productKey = await parseProductKey(product.publicKeyPem);
  });

  const start = async (file?: string) => {
    relay = await startRelay({
      dataDir: dir,
      productKey,
      relayFile: file,
      port: 0,
      host: '127.0.0.1',
      leaseTtlSeconds: TTL_S,
      logLevel: 'silent',
      clock: () => now,
    });
  };

  let loadedFile: string;
  const startWith = async (
    seats: number,
    extra: Parameters<typeof relayFile>[1] extends infer T ? Partial<T> : never = {},
  ) => {
    loadedFile = relayFile(product, {
      relayPublicKey: relayKey,
      site: SITE,
      seats,
      issuedAt: new Date(now),
      ...extra,
    });
    await start(loadedFile);
  };

  beforeEach(async () => {
    now = Date.now();
    ({ dir, remove } = tempDir());
    relayKey = (await initRelay(dir, SITE, () => now)).public_key;
  });

  afterEach(async () => {
    await relay?.close();
    remove();
  });

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${relay.url}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      text,
      body: text ? JSON.parse(text) : undefined,
      headers: response.headers,
    };
  };
  const lease = (fingerprint: string, name?: string) =>
    call('POST', '/v1/leases', name === undefined ? { fingerprint } : { fingerprint, name });

  it('leases exactly the seats there are, and gives a machine its own lease back', async () => {
    await startWith(3);
    const first = await lease('machine-1', 'Drafting 1');
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      fingerprint: 'machine-1',
      name: 'Drafting 1',
      leased_at: new Date(now).toISOString(),
      last_heartbeat_at: new Date(now).toISOString(),
      expires_at: new Date(now + TTL_S * 1000).toISOString(),
    });
    const again = await lease('machine-1');
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect((await lease('machine-2')).status).toBe(201);
    expect((await lease('machine-3')).status).toBe(201);
    const refused = await lease('machine-4');
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ status: 409, code: 'no_seats' });
    const list = await call('GET', '/v1/leases');
    expect(list.body.total).toBe(3);
    expect(list.body.leases.map((l: { fingerprint: string }) => l.fingerprint)).toEqual([
      'machine-1',
      'machine-2',
      'machine-3',
    ]);
    const status = await call('GET', '/v1/status');
    expect(status.body).toMatchObject({
      site: SITE,
      seats: 3,
      seats_in_use: 3,
      product_id: product.productId,
      revoked: false,
      expired: false,
      clock_rewound: false,
      lease_seconds: TTL_S,
    });
    expect(typeof status.body.relay_file).toBe('string');
  });

  it('renews a lease on heartbeat, frees its seat on release, and forgets no ended lease', async () => {
    await startWith(1);
    const { body: held } = await lease('machine-1');
    now += 60_000;
    const beat = await call('POST', `/v1/leases/${held.id}/heartbeat`);
    expect(beat.status).toBe(200);
    expect(beat.body).toMatchObject({
      id: held.id,
      leased_at: held.leased_at,
      last_heartbeat_at: new Date(now).toISOString(),
      expires_at: new Date(now + TTL_S * 1000).toISOString(),
    });
    expect((await lease('machine-2')).status).toBe(409);
    const released = await call('DELETE', `/v1/leases/${held.id}`);
    expect(released.status).toBe(204);
    expect(released.text).toBe('');
    // Releasing again is harmless; a heartbeat of an ended lease is a 404.
    expect((await call('DELETE', `/v1/leases/${held.id}`)).status).toBe(204);
    expect((await call('POST', `/v1/leases/${held.id}/heartbeat`)).body).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect((await lease('machine-2')).status).toBe(201);
    expect((await call('DELETE', `/v1/leases/${randomUUID()}`)).status).toBe(404);
    expect((await call('POST', '/v1/leases/not-a-uuid/heartbeat')).body).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
  });

  it('lets a lease lapse at its expiry: its seat is free and it cannot be revived', async () => {
    await startWith(1);
    const { body: held } = await lease('machine-1');
    now += TTL_S * 1000 - 1;
    expect((await lease('machine-2')).status).toBe(409);
    now += 1;
    expect((await call('GET', '/v1/leases')).body.total).toBe(0);
    expect((await call('POST', `/v1/leases/${held.id}/heartbeat`)).status).toBe(404);
    const next = await lease('machine-2');
    expect(next.status).toBe(201);
    // The same machine leasing again after its lease lapsed gets a new lease.
    now += TTL_S * 1000;
    const renewed = await lease('machine-1');
    expect(renewed.status).toBe(201);
    expect(renewed.body.id).not.toBe(held.id);
  });

  it("takes the lease lifetime from the relay file's heartbeat interval", async () => {
    await startWith(2, { heartbeatIntervalSeconds: 45 });
    const { body } = await lease('machine-1');
    expect(Date.parse(body.expires_at) - Date.parse(body.leased_at)).toBe(45_000);
  });

  it('refuses leases and heartbeats while the clock is more than 5 minutes behind the latest seen', async () => {
    await startWith(2);
    const { body: held } = await lease('machine-1');
    now -= 5 * 60_000; // Exactly the tolerance: still served, dated at the latest time seen.
    const within = await call('POST', `/v1/leases/${held.id}/heartbeat`);
    expect(within.status).toBe(200);
    expect(within.body.last_heartbeat_at).toBe(held.leased_at);
    now -= 1;
    for (const answer of [await lease('machine-2'), await call('POST', `/v1/leases/${held.id}/heartbeat`)]) {
      expect(answer.status).toBe(503);
      expect(answer.body.code).toBe('clock_rewound');
      expect(answer.headers.get('retry-after')).toBeTruthy();
    }
    expect((await call('GET', '/v1/status')).body.clock_rewound).toBe(true);
    // A restart does not forget the latest time seen.
    await relay.close();
    await start();
    expect((await lease('machine-2')).body.code).toBe('clock_rewound');
    now += 1;
    expect((await lease('machine-2')).status).toBe(201);
  });

  it('records the time it has seen when it ticks, never a time behind it', async () => {
    await startWith(1);
    now += 90_000;
    relay.book.tick();
    expect(relay.store.latestSeen()).toBe(now);
    now -= 10 * 60_000;
    relay.book.tick();
    expect(relay.store.latestSeen()).toBe(now + 10 * 60_000);
  });

  it('leases nothing past the relay file exp, and the status says so', async () => {
    const exp = Math.floor(now / 1000) * 1000 + 3_600_000;
    await startWith(2, { expiresAt: new Date(exp) });
    const { body: held } = await lease('machine-1');
    now = exp;
    for (const answer of [await lease('machine-2'), await call('POST', `/v1/leases/${held.id}/heartbeat`)]) {
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe('relay_file_expired');
    }
    const status = await call('GET', '/v1/status');
    expect(status.body).toMatchObject({ expired: true, file_expires_at: new Date(exp).toISOString() });
    // An expired stored file still starts (and still leases nothing), given again or not.
    await relay.close();
    await start();
    expect((await lease('machine-2')).body.code).toBe('relay_file_expired');
    await relay.close();
    await start(loadedFile);
    expect((await call('GET', '/v1/status')).body.expired).toBe(true);
  });

  it('keeps its leases across a restart', async () => {
    await startWith(2);
    const a = (await lease('machine-1')).body;
    const b = (await lease('machine-2')).body;
    await relay.close();
    await start();
    expect((await call('GET', '/v1/leases')).body).toEqual({ leases: [a, b], total: 2 });
    expect((await lease('machine-3')).status).toBe(409);
    expect((await call('POST', `/v1/leases/${a.id}/heartbeat`)).status).toBe(200);
  });

  it('refuses oversized and malformed bodies as problem answers', async () => {
    await startWith(2);
    const big = await lease('x'.repeat(17 * 1024));
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ status: 413, code: 'payload_too_large' });
    const cases: [unknown, string | undefined][] = [
      ['{"fingerprint":', undefined],
      ['', undefined],
      [{ fingerprint: 'm', seats: 5 }, 'seats'],
      [{ fingerprint: 42 }, 'fingerprint'],
      [{ name: 'no fingerprint' }, 'fingerprint'],
      [{ fingerprint: '' }, 'fingerprint'],
      [{ fingerprint: 'a\u0000b' }, 'fingerprint'],
      [{ fingerprint: 'm', name: 7 }, 'name'],
      ['{"fingerprint":"\\ud800"}', 'fingerprint'],
      [[{ fingerprint: 'm' }], undefined],
    ];
    for (const [body, field] of cases) {
      const answer = await call('POST', '/v1/leases', body);
      expect({ body, status: answer.status, code: answer.body.code }).toEqual({
        body,
        status: 400,
        code: 'validation_failed',
      });
      if (field) expect(answer.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(answer.headers.get('licensing-signature')).toBeNull();
    }
    const text = await call('POST', '/v1/leases', 'fingerprint=m', { 'content-type': 'text/plain' });
    expect(text.body).toMatchObject({ status: 400, code: 'validation_failed' });
    expect((await call('GET', '/v1/nothing')).body).toMatchObject({ status: 404, code: 'not_found' });
    expect((await call('GET', '/v1/status')).body.seats_in_use).toBe(0);
  });

  it("signs every 2xx answer with the relay's key, for the request's nonce", async () => {
    await startWith(2);
    const nonce = randomUUID();
    const otherKey = (await generateKeyPair('ed25519')).publicKeyPem;
    const check = async (
      answer: { text: string; headers: Headers },
      key = relayKey,
      sentNonce: string = nonce,
    ) =>
      verifySignedAnswer(
        { body: answer.text, signature: answer.headers.get('licensing-signature'), nonce: sentNonce },
        key,
        { now },
      );
    const leased = await call('POST', '/v1/leases', { fingerprint: 'm-1' }, { 'licensing-nonce': nonce });
    const answers = [
      leased,
      await call('POST', `/v1/leases/${leased.body.id}/heartbeat`, undefined, { 'licensing-nonce': nonce }),
      await call('GET', '/v1/leases', undefined, { 'licensing-nonce': nonce }),
      await call('GET', '/v1/status', undefined, { 'licensing-nonce': nonce }),
      await call('DELETE', `/v1/leases/${leased.body.id}`, undefined, { 'licensing-nonce': nonce }),
    ];
    for (const answer of answers) {
      expect(await check(answer)).toEqual({ valid: true, errors: [], signed_at: expect.any(String) });
      expect((await check(answer, otherKey)).errors.map((e) => e.code)).toEqual(['signature_invalid']);
      expect((await check(answer, relayKey, 'another-nonce')).errors.map((e) => e.code)).toEqual([
        'nonce_mismatch',
      ]);
    }
    // A changed body fails.
    const tampered = { ...leased, text: leased.text.replace('m-1', 'm-2') };
    expect((await check(tampered)).errors.map((e) => e.code)).toEqual(['signature_invalid']);
    // The kid is the relay file's id.
    const header = JSON.parse(
      Buffer.from(leased.headers.get('licensing-signature')!.split('.')[0]!, 'base64url').toString(),
    );
    const status = (await call('GET', '/v1/status')).body;
    expect(header).toMatchObject({
      alg: 'EdDSA',
      typ: 'licensing-answer+jws',
      kid: status.relay_file_id,
      nonce,
    });
    // Errors are not signed; a malformed nonce is a 400.
    await call('POST', '/v1/leases', { fingerprint: 'm-2' });
    await call('POST', '/v1/leases', { fingerprint: 'm-3' });
    const refused = await call('POST', '/v1/leases', { fingerprint: 'm-4' }, { 'licensing-nonce': nonce });
    expect(refused.status).toBe(409);
    expect(refused.headers.get('licensing-signature')).toBeNull();
    const badNonce = await call('GET', '/v1/status', undefined, { 'licensing-nonce': 'short' });
    expect(badNonce.body).toMatchObject({ status: 400, code: 'validation_failed' });
  });
});
