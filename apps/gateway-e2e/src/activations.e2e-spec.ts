import { ApiClient, EventRecorder, waitFor } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, productWithKeyPair } from './support/fixtures';

const activate = (api: ApiClient, body: Record<string, unknown>) => api.post('/v1/activations', body);

describe('activations and seats', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let recorder: EventRecorder;

  beforeAll(async () => {
    stack = await startStack({ env: { ACTIVATION_SWEEP_MS: '100' } });
    recorder = await EventRecorder.start(stack.namespace);
    org = await stack.newOrganization();
  });
  afterAll(async () => {
    await recorder.stop();
    await stack.close();
  });

  it('gives exactly 5 of 50 parallel activations of a 5-seat license a seat; the other 45 get seat_limit_reached', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, {
      product_id: product.id,
      license_type: 'floating',
      max_seats: 5,
    });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        activate(org.api, { license_id: license.id, fingerprint: `machine-${i}` }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(45);
    for (const answer of refused)
      expect(answer.body).toMatchObject({ status: 409, code: 'seat_limit_reached' });
    const listed = await org.api.get(`/v1/activations?license_id=${license.id}`);
    expect(listed.body.total).toBe(5);
  });

  it("lists a license's activations by its serial as well as by its id, and nothing for a serial of another organization", async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, {
      product_id: product.id,
      license_type: 'floating',
      max_seats: 3,
    });
    const other = await createLicense(org.api, {
      product_id: product.id,
      license_type: 'floating',
      max_seats: 3,
    });
    for (const fingerprint of ['a', 'b'])
      await activate(org.api, { license_key: license.serial, fingerprint });
    await activate(org.api, { license_id: other.id, fingerprint: 'c' });

    const byKey = await org.api.get(`/v1/activations?license_key=${encodeURIComponent(license.serial)}`);
    expect(byKey.status).toBe(200);
    expect(byKey.body.total).toBe(2);
    expect(byKey.body.activations.map((a: { license_id: string }) => a.license_id)).toEqual([
      license.id,
      license.id,
    ]);
    const both = await org.api.get(
      `/v1/activations?license_id=${other.id}&license_key=${encodeURIComponent(license.serial)}`,
    );
    expect(both.body).toEqual({ activations: [], total: 0 });

    const stranger = await stack.newOrganization();
    const foreign = await stranger.api.get(
      `/v1/activations?license_key=${encodeURIComponent(license.serial)}`,
    );
    expect(foreign.body).toEqual({ activations: [], total: 0 });
  });

  it("caps seats by the product's max_concurrent_activations", async () => {
    const { product } = await productWithKeyPair(org.api, { max_concurrent_activations: 2 });
    const license = await createLicense(org.api, { product_id: product.id, max_seats: 10 });
    expect((await activate(org.api, { license_id: license.id, fingerprint: 'a' })).status).toBe(201);
    expect((await activate(org.api, { license_key: license.serial, fingerprint: 'b' })).status).toBe(201);
    const third = await activate(org.api, { license_id: license.id, fingerprint: 'c' });
    expect(third.status).toBe(409);
    expect(third.body.code).toBe('seat_limit_reached');
  });

  it('answers the existing activation (200) when the same fingerprint activates again', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id });
    const first = await activate(org.api, {
      license_id: license.id,
      fingerprint: 'same',
      hostname: 'build-01',
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      license_id: license.id,
      fingerprint: 'same',
      hostname: 'build-01',
      platform: null,
      components: {},
      expires_at: null,
    });
    const again = await activate(org.api, { license_id: license.id, fingerprint: 'same' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
  });

  it('binds a node-locked license to its first machine and refuses any other', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id, license_type: 'node_locked' });
    expect((await activate(org.api, { license_id: license.id, fingerprint: 'first-machine' })).status).toBe(
      201,
    );
    const bound = await org.api.get(`/v1/licenses/${license.id}`);
    expect(bound.body.hardware_binding).toEqual({ fingerprint: 'first-machine' });
    expect(bound.body.license_blob).not.toBe(license.license_blob);
    const claims = JSON.parse(
      Buffer.from(
        Buffer.from(bound.body.license_blob, 'base64').toString().split('.')[1],
        'base64url',
      ).toString(),
    );
    expect(claims.hardware_binding).toEqual({ fingerprint: 'first-machine' });

    const other = await activate(org.api, { license_id: license.id, fingerprint: 'second-machine' });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('fingerprint_mismatch');
  });

  it('accepts only the bound fingerprint of a license created with a binding', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, {
      product_id: product.id,
      license_type: 'node_locked',
      hardware_binding: { fingerprint: 'bound' },
    });
    expect((await activate(org.api, { license_id: license.id, fingerprint: 'intruder' })).body.code).toBe(
      'fingerprint_mismatch',
    );
    expect((await activate(org.api, { license_id: license.id, fingerprint: 'bound' })).status).toBe(201);
  });

  it('refuses activations of revoked, suspended and expired licenses with license_not_active', async () => {
    const { product } = await productWithKeyPair(org.api);
    const revoked = await createLicense(org.api, { product_id: product.id });
    await org.api.delete(`/v1/licenses/${revoked.id}`);
    const suspended = await createLicense(org.api, { product_id: product.id });
    expect((await org.api.patch(`/v1/licenses/${suspended.id}`, { status: 'suspended' })).status).toBe(200);
    const expired = await createLicense(org.api, { product_id: product.id });
    // The earliest end allowed (never before valid_from), and already past.
    expect(
      (await org.api.patch(`/v1/licenses/${expired.id}`, { valid_until: expired.valid_from })).status,
    ).toBe(200);
    for (const license of [revoked, suspended, expired]) {
      const answer = await activate(org.api, { license_id: license.id, fingerprint: 'm' });
      expect(answer.status).toBe(422);
      expect(answer.body.code).toBe('license_not_active');
    }
  });

  it('answers 404 for a license of another organization, and 400 without license_id or license_key', async () => {
    const other = await stack.newOrganization();
    const { product } = await productWithKeyPair(other.api);
    const theirs = await createLicense(other.api, { product_id: product.id });
    expect((await activate(org.api, { license_id: theirs.id, fingerprint: 'x' })).status).toBe(404);
    expect((await activate(org.api, { license_key: theirs.serial, fingerprint: 'x' })).status).toBe(404);
    expect((await activate(org.api, { fingerprint: 'x' })).status).toBe(400);
    expect((await activate(org.api, { license_id: theirs.id })).status).toBe(400);
    const listed = await org.api.get(`/v1/activations?license_id=${theirs.id}`);
    expect(listed.body).toEqual({ activations: [], total: 0 });
  });

  it('frees the seat of a machine that stops sending heartbeats, on its own, and says so', async () => {
    const { product } = await productWithKeyPair(org.api, { activation_heartbeat_interval: 1 });
    const license = await createLicense(org.api, { product_id: product.id, max_seats: 1 });
    const silent = await activate(org.api, { license_id: license.id, fingerprint: 'silent' });
    expect(silent.status).toBe(201);
    expect(Date.parse(silent.body.expires_at) - Date.parse(silent.body.created_at)).toBe(1000);

    const beat = await org.api.post(`/v1/activations/${silent.body.id}/heartbeat`);
    expect(beat.status).toBe(200);
    expect(Date.parse(beat.body.expires_at)).toBeGreaterThan(Date.parse(silent.body.expires_at));
    expect((await activate(org.api, { license_id: license.id, fingerprint: 'newcomer' })).status).toBe(409);

    await recorder.waitFor('activation.expired', (e) => e.data.id === silent.body.id, 10_000);
    const newcomer = await activate(org.api, { license_id: license.id, fingerprint: 'newcomer' });
    expect(newcomer.status).toBe(201);
    expect((await org.api.post(`/v1/activations/${silent.body.id}/heartbeat`)).status).toBe(404);
    expect(
      (await org.api.get(`/v1/activations?license_id=${license.id}`)).body.activations.map((a: any) => a.id),
    ).toEqual([newcomer.body.id]);
  });

  it('lets a client key activate, heartbeat, validate and deactivate, but not list', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id });
    const client = (await apiKeyWithScopes(org.api, ['client'])).api;
    const created = await activate(client, { license_key: license.serial, fingerprint: 'laptop' });
    expect(created.status).toBe(201);
    expect((await client.post(`/v1/activations/${created.body.id}/heartbeat`)).status).toBe(200);
    expect(
      (await client.post('/v1/licenses/validate', { key: license.serial, fingerprint: 'laptop' })).body.code,
    ).toBe('VALID');
    expect((await client.get(`/v1/activations?license_id=${license.id}`)).status).toBe(403);
    expect((await client.get(`/v1/licenses/${license.id}`)).status).toBe(403);
    const deleted = await client.delete(`/v1/activations/${created.body.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.message).toMatch(/deleted/);
    expect((await client.delete(`/v1/activations/${created.body.id}`)).status).toBe(404);
    await recorder.waitFor('activation.created', (e) => e.data.id === created.body.id);
    await recorder.waitFor('activation.deleted', (e) => e.data.id === created.body.id);
  });

  it('runs a floating license of 3 seats: 3 machines in, a 4th refused, a silent one frees its seat', async () => {
    // 3 s, not the minimum of 1 s: on a loaded machine a heartbeat sent every 250 ms can still take
    // over a second to land, and a beating machine must not lapse.
    const { product } = await productWithKeyPair(org.api, { activation_heartbeat_interval: 3 });
    const license = await createLicense(org.api, {
      product_id: product.id,
      license_type: 'floating',
      max_seats: 3,
    });
    const machines = await Promise.all(
      ['a', 'b', 'c'].map((fingerprint) => activate(org.api, { license_id: license.id, fingerprint })),
    );
    expect(machines.map((m) => m.status)).toEqual([201, 201, 201]);
    expect((await activate(org.api, { license_id: license.id, fingerprint: 'd' })).status).toBe(409);
    // a and b keep beating; c goes silent.
    const keepAlive = setInterval(() => {
      for (const m of machines.slice(0, 2)) void org.api.post(`/v1/activations/${m.body.id}/heartbeat`);
    }, 250);
    try {
      const fourth = await waitFor(
        async () => {
          const answer = await activate(org.api, { license_id: license.id, fingerprint: 'd' });
          return answer.status === 201 ? answer : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 200, what: 'a free seat' },
      );
      expect(fourth.body.fingerprint).toBe('d');
      for (const m of machines.slice(0, 2)) {
        expect((await org.api.post(`/v1/activations/${m.body.id}/heartbeat`)).status).toBe(200);
      }
    } finally {
      clearInterval(keepAlive);
    }
  });
});

describe('validate by key', () => {
  let stack: TestStack;
  let org: TestOrganization;

  // A sweeper slower than the test, so a lapsed activation is still there to be reported HEARTBEAT_DEAD.
  beforeAll(async () => {
    stack = await startStack({ env: { ACTIVATION_SWEEP_MS: '3600000' } });
    org = await stack.newOrganization();
  });
  afterAll(() => stack.close());

  const validate = (body: Record<string, unknown>) => org.api.post('/v1/licenses/validate', body);

  it('reaches every code in the documented order', async () => {
    const { product } = await productWithKeyPair(org.api, { activation_heartbeat_interval: 1 });
    const license = await createLicense(org.api, { product_id: product.id, max_seats: 3 });

    expect((await validate({ key: 'LIC-NOPE-0000000000000000' })).body).toMatchObject({
      valid: false,
      code: 'NOT_FOUND',
      license: null,
      activation: null,
    });
    const valid = await validate({ key: license.serial });
    expect(valid.status).toBe(200);
    expect(valid.body).toMatchObject({ valid: true, code: 'VALID', activation: null });
    expect(valid.body.license).toMatchObject({
      serial: license.serial,
      product_id: product.id,
      status: 'active',
    });

    expect((await validate({ key: license.serial, fingerprint: 'unknown' })).body.code).toBe('NO_ACTIVATION');
    const machine = await activate(org.api, {
      license_id: license.id,
      fingerprint: 'm1',
      components: { cpu: 'c-1', disk: 'd-1' },
    });
    const ok = await validate({ key: license.serial, fingerprint: 'm1', components: { cpu: 'c-1' } });
    expect(ok.body).toMatchObject({ valid: true, code: 'VALID' });
    expect(ok.body.activation.id).toBe(machine.body.id);
    expect(
      (await validate({ key: license.serial, fingerprint: 'm1', components: { cpu: 'c-2' } })).body.code,
    ).toBe('COMPONENTS_MISMATCH');
    expect(
      (await validate({ key: license.serial, fingerprint: 'm1', components: { gpu: 'g' } })).body.code,
    ).toBe('COMPONENTS_MISMATCH');

    const dead = await waitFor(
      async () => {
        const answer = await validate({ key: license.serial, fingerprint: 'm1' });
        return answer.body.code === 'HEARTBEAT_DEAD' ? answer : undefined;
      },
      { timeoutMs: 5_000, what: 'the heartbeat deadline' },
    );
    expect(dead.body.valid).toBe(false);
    expect(dead.body.activation.id).toBe(machine.body.id);

    const bound = await createLicense(org.api, {
      product_id: product.id,
      license_type: 'node_locked',
      hardware_binding: { fingerprint: 'the-one' },
    });
    expect((await validate({ key: bound.serial, fingerprint: 'another' })).body.code).toBe(
      'FINGERPRINT_MISMATCH',
    );

    const expired = await createLicense(org.api, { product_id: product.id });
    expect(
      (await org.api.patch(`/v1/licenses/${expired.id}`, { valid_until: expired.valid_from })).status,
    ).toBe(200);
    expect((await validate({ key: expired.serial, fingerprint: 'm1' })).body).toMatchObject({
      code: 'EXPIRED',
      license: { is_expired: true, status: 'expired' },
    });
    await org.api
      .patch(`/v1/licenses/${expired.id}`, { status: 'suspended' })
      .then((r) => expect(r.status).toBe(409));

    await org.api.patch(`/v1/licenses/${license.id}`, { status: 'suspended' });
    expect((await validate({ key: license.serial, fingerprint: 'm1' })).body.code).toBe('SUSPENDED');
    await org.api.delete(`/v1/licenses/${license.id}`);
    expect((await validate({ key: license.serial, fingerprint: 'm1' })).body.code).toBe('REVOKED');
  });

  it("never validates another organization's key", async () => {
    const other = await stack.newOrganization();
    const { product } = await productWithKeyPair(other.api);
    const theirs = await createLicense(other.api, { product_id: product.id });
    expect((await validate({ key: theirs.serial })).body.code).toBe('NOT_FOUND');
  });

  it('rejects malformed requests', async () => {
    expect((await validate({})).status).toBe(400);
    expect((await validate({ key: 'x', components: { cpu: 1 } })).status).toBe(400);
    expect((await validate({ key: 'x', extra: true })).status).toBe(400);
  });
});
