import { ApiClient, EventRecorder, waitFor } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { createLicense, expireLicenseInDatabase, productWithKeyPair, sql } from './support/fixtures';
import { WebhookReceiver } from './support/webhook-receiver';

describe('policies', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let recorder: EventRecorder;
  let productId: string;

  const newPolicy = async (body: Record<string, unknown> = {}) => {
    const created = await org.api.post('/api/v1/policies', { product_id: productId, name: 'Model', ...body });
    expect(created.status).toBe(201);
    return created.body as Record<string, any> & { id: string };
  };
  const licenseOf = (policyId: string, body: Record<string, unknown> = {}) =>
    createLicense(org.api, { policy_id: policyId, ...body });
  const activate = (api: ApiClient, body: Record<string, unknown>) => api.post('/api/v1/activations', body);
  const validate = (body: Record<string, unknown>) => org.api.post('/api/v1/licenses/validate', body);

  beforeAll(async () => {
    stack = await startStack({
      env: { ACTIVATION_SWEEP_MS: '100', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    recorder = await EventRecorder.start(stack.namespace);
    org = await stack.newOrganization();
    productId = (await productWithKeyPair(org.api, { default_valid_days: 30 })).product.id;
  });
  afterAll(async () => {
    await recorder.stop();
    await stack.close();
  });

  describe('the resource', () => {
    it('creates a policy with the documented defaults, duration_days from the product', async () => {
      const policy = await newPolicy();
      expect(policy).toEqual({
        id: expect.any(String),
        product_id: productId,
        name: 'Model',
        license_type: 'subscription',
        duration_days: 30,
        max_machines: 1,
        max_processes: null,
        heartbeat_interval_seconds: null,
        heartbeat_grace_seconds: 0,
        check_in_interval_days: null,
        overage: 'none',
        machine_matching: 'all',
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect((await org.api.get(`/v1/policies/${policy.id}`)).body).toEqual(policy);
      const perpetual = await newPolicy({ license_type: 'perpetual' });
      expect(perpetual.duration_days).toBeNull();
    });

    it('rejects each invalid field with a 400 naming it', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ name: '' }, 'name'],
        [{ product_id: 'nope' }, 'product_id'],
        [{ license_type: 'lifetime' }, 'license_type'],
        [{ duration_days: 0 }, 'duration_days'],
        [{ max_machines: 0 }, 'max_machines'],
        [{ max_processes: 1.5 }, 'max_processes'],
        [{ heartbeat_interval_seconds: 0 }, 'heartbeat_interval_seconds'],
        [{ heartbeat_grace_seconds: -1 }, 'heartbeat_grace_seconds'],
        [{ check_in_interval_days: 0 }, 'check_in_interval_days'],
        [{ overage: '3x' }, 'overage'],
        [{ machine_matching: 'three' }, 'machine_matching'],
        [{ entitlementz: [] }, 'entitlementz'],
        [{ license_type: 'perpetual', duration_days: 10 }, 'duration_days'],
        [{ license_type: 'node_locked', max_machines: 2 }, 'max_machines'],
      ];
      for (const [body, field] of cases) {
        const answer = await org.api.post('/api/v1/policies', { product_id: productId, name: 'x', ...body });
        expect(answer.status).toBe(400);
        expect(answer.body.code).toBe('validation_failed');
        expect(answer.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      }
    });

    it('lists policies newest first, filtered by product', async () => {
      const other = (await productWithKeyPair(org.api)).product.id;
      const first = await newPolicy({ product_id: other, name: 'a' });
      const second = await newPolicy({ product_id: other, name: 'b' });
      const listed = await org.api.get(`/api/v1/policies?product_id=${other}`);
      expect(listed.status).toBe(200);
      expect(listed.body.total).toBe(2);
      expect(listed.body.policies.map((p: { id: string }) => p.id)).toEqual([second.id, first.id]);
      const page = await org.api.get(`/api/v1/policies?product_id=${other}&per_page=1&page=2`);
      expect(page.body.policies.map((p: { id: string }) => p.id)).toEqual([first.id]);
      expect((await org.api.get(`/api/v1/policies?per_page=0`)).status).toBe(400);
    });

    it('PATCHes any field but product_id, which is a 400', async () => {
      const policy = await newPolicy();
      const changed = await org.api.patch(`/api/v1/policies/${policy.id}`, {
        name: 'Renamed',
        overage: '2x',
      });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ name: 'Renamed', overage: '2x', max_machines: 1 });
      const immutable = await org.api.patch(`/api/v1/policies/${policy.id}`, { product_id: productId });
      expect(immutable.status).toBe(400);
      expect(immutable.body.errors.map((e: { field: string }) => e.field)).toContain('product_id');
    });

    it("answers 404 for another organization's policy and product", async () => {
      const policy = await newPolicy();
      const stranger = await stack.newOrganization();
      for (const answer of [
        await stranger.api.get(`/api/v1/policies/${policy.id}`),
        await stranger.api.patch(`/api/v1/policies/${policy.id}`, { name: 'x' }),
        await stranger.api.delete(`/api/v1/policies/${policy.id}`),
        await stranger.api.post('/api/v1/policies', { product_id: productId, name: 'x' }),
        await stranger.api.post('/api/v1/licenses', { policy_id: policy.id }),
      ])
        expect(answer.body).toMatchObject({ status: 404, code: 'not_found' });
      expect((await stranger.api.get(`/api/v1/policies?product_id=${productId}`)).body).toEqual({
        policies: [],
        total: 0,
      });
    });

    it('deletes an unused policy, refuses one that licenses use (409), and records events and audit', async () => {
      const unused = await newPolicy();
      expect((await org.api.delete(`/api/v1/policies/${unused.id}`)).status).toBe(200);
      expect((await org.api.get(`/api/v1/policies/${unused.id}`)).status).toBe(404);
      const used = await newPolicy();
      const license = await licenseOf(used.id);
      await org.api.delete(`/api/v1/licenses/${license.id}`);
      const refused = await org.api.delete(`/api/v1/policies/${used.id}`);
      expect(refused.body).toMatchObject({ status: 409, code: 'conflict' });
      await recorder.waitFor('policy.created', (e) => e.data.id === unused.id);
      await recorder.waitFor('policy.deleted', (e) => e.data.id === unused.id);
      await waitFor(
        async () =>
          (await org.api.get(`/api/v1/audit-events?resource_type=policy&resource_id=${unused.id}`)).body
            .total === 2,
      );
    });
  });

  it('delivers policy.created, policy.updated, policy.deleted and license.checked_in to webhooks', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const events = ['policy.created', 'policy.updated', 'policy.deleted', 'license.checked_in'];
      const webhook = await org.api.post('/api/v1/webhooks', { url: receiver.url, events });
      expect(webhook.status).toBe(201);
      const policy = await newPolicy();
      await org.api.patch(`/api/v1/policies/${policy.id}`, { max_machines: 3 });
      const license = await licenseOf(policy.id);
      await org.api.post(`/api/v1/licenses/${license.id}/check-in`);
      await org.api.delete(`/api/v1/licenses/${license.id}`);
      const unused = await newPolicy();
      await org.api.delete(`/api/v1/policies/${unused.id}`);
      const typesOf = (id: string) =>
        receiver.received.filter((hook) => hook.body.data?.id === id).map((hook) => hook.body.type);
      await waitFor(() => typesOf(policy.id).length === 2 && typesOf(unused.id).length === 2, {
        what: 'the policy deliveries',
      });
      expect(typesOf(policy.id).sort()).toEqual(['policy.created', 'policy.updated']);
      expect(typesOf(unused.id).sort()).toEqual(['policy.created', 'policy.deleted']);
      await waitFor(() => typesOf(license.id).includes('license.checked_in'), { what: 'the check-in' });
      const updated = receiver.received.find((hook) => hook.body.type === 'policy.updated')!;
      expect(updated.body.data).toMatchObject({ id: policy.id, max_machines: 3 });
    } finally {
      await receiver.close();
    }
  });

  describe('licenses of a policy', () => {
    it('take license_type, valid_until and max_seats from the policy unless the request gives them', async () => {
      const policy = await newPolicy({ license_type: 'floating', duration_days: 10, max_machines: 4 });
      const license = await licenseOf(policy.id);
      expect(license).toMatchObject({
        product_id: productId,
        policy_id: policy.id,
        license_type: 'floating',
        max_seats: 4,
        last_check_in_at: null,
      });
      const days = (Date.parse(license.valid_until) - Date.parse(license.valid_from)) / 86_400_000;
      expect(days).toBe(10);
      const own = await licenseOf(policy.id, {
        product_id: productId,
        license_type: 'trial',
        valid_days: 3,
        max_seats: 2,
      });
      expect(own).toMatchObject({ license_type: 'trial', max_seats: 2 });
      const plain = await createLicense(org.api, { product_id: productId });
      expect(plain).toMatchObject({ policy_id: null, last_check_in_at: null, max_seats: 1 });
    });

    it('answers 422 policy_product_mismatch for another product, 404 for an unknown policy', async () => {
      const policy = await newPolicy();
      const other = (await productWithKeyPair(org.api)).product.id;
      const mismatch = await org.api.post('/api/v1/licenses', { policy_id: policy.id, product_id: other });
      expect(mismatch.body).toMatchObject({ status: 422, code: 'policy_product_mismatch' });
      const unknown = await org.api.post('/api/v1/licenses', {
        policy_id: '00000000-0000-4000-8000-000000000000',
      });
      expect(unknown.body).toMatchObject({ status: 404, code: 'not_found' });
      const neither = await org.api.post('/api/v1/licenses', {});
      expect(neither.body.errors.map((e: { field: string }) => e.field)).toContain('product_id');
    });

    it('a policy PATCH reaches the activation limit and validate at once; an override stays', async () => {
      const policy = await newPolicy({ license_type: 'floating', max_machines: 1 });
      const inherits = await licenseOf(policy.id);
      const overrides = await licenseOf(policy.id, { max_seats: 1 });
      expect((await activate(org.api, { license_id: inherits.id, fingerprint: 'a' })).status).toBe(201);
      expect((await activate(org.api, { license_id: inherits.id, fingerprint: 'b' })).body.code).toBe(
        'seat_limit_reached',
      );
      await org.api.patch(`/api/v1/policies/${policy.id}`, { max_machines: 2 });
      expect((await activate(org.api, { license_id: inherits.id, fingerprint: 'b' })).status).toBe(201);
      expect((await org.api.get(`/api/v1/licenses/${inherits.id}`)).body.max_seats).toBe(2);
      expect((await org.api.get(`/api/v1/licenses/${overrides.id}`)).body.max_seats).toBe(1);
      await recorder.waitFor('license.updated', (e) => e.data.id === inherits.id && e.data.max_seats === 2);

      // Overage switched on later reaches validate and activations in the same way.
      await org.api.patch(`/api/v1/policies/${policy.id}`, { max_machines: 1, overage: '2x' });
      expect((await validate({ key: inherits.serial })).body).toMatchObject({ valid: true, code: 'OVERAGE' });
      expect((await validate({ key: inherits.serial, fingerprint: 'a' })).body.code).toBe('OVERAGE');
      expect((await activate(org.api, { license_id: inherits.id, fingerprint: 'c' })).body.code).toBe(
        'seat_limit_reached',
      );
    });

    it('overage lets exactly floor(max_machines × factor) of 30 parallel activations through', async () => {
      const policy = await newPolicy({ license_type: 'floating', max_machines: 4, overage: '1.5x' });
      const license = await licenseOf(policy.id);
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          activate(org.api, { license_id: license.id, fingerprint: `m-${i}` }),
        ),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(6);
      for (const answer of answers.filter((a) => a.status !== 201))
        expect(answer.body.code).toBe('seat_limit_reached');
      expect((await validate({ key: license.serial, fingerprint: 'm-0' })).body.code).toMatch(
        /OVERAGE|NO_ACTIVATION/,
      );
      expect((await validate({ key: license.serial })).body).toMatchObject({ valid: true, code: 'OVERAGE' });

      const unlimited = await licenseOf(
        (await newPolicy({ license_type: 'floating', overage: 'always' })).id,
      );
      for (const fingerprint of ['a', 'b', 'c'])
        expect((await activate(org.api, { license_id: unlimited.id, fingerprint })).status).toBe(201);
    });

    it('keeps a lapsed activation for the grace (holding its seat), revives it by a heartbeat, then frees it', async () => {
      const policy = await newPolicy({ heartbeat_interval_seconds: 1, heartbeat_grace_seconds: 2 });
      const license = await licenseOf(policy.id);
      const seat = await activate(org.api, { license_id: license.id, fingerprint: 'm' });
      expect(seat.status).toBe(201);
      await waitFor(
        async () =>
          (await validate({ key: license.serial, fingerprint: 'm' })).body.code === 'HEARTBEAT_DEAD',
      );
      // In the grace the seat is still held: another machine finds none.
      expect((await activate(org.api, { license_id: license.id, fingerprint: 'n' })).body.code).toBe(
        'seat_limit_reached',
      );
      const revived = await org.api.post(`/api/v1/activations/${seat.body.id}/heartbeat`);
      expect(revived.status).toBe(200);
      expect((await validate({ key: license.serial, fingerprint: 'm' })).body.code).toBe('VALID');
      await recorder.waitFor('activation.expired', (e) => e.data.id === seat.body.id, 15_000);
      expect((await org.api.post(`/api/v1/activations/${seat.body.id}/heartbeat`)).status).toBe(404);
      expect((await activate(org.api, { license_id: license.id, fingerprint: 'n' })).status).toBe(201);
    });

    it('uses the policy heartbeat interval instead of the product one', async () => {
      const product = (await productWithKeyPair(org.api, { activation_heartbeat_interval: 3600 })).product;
      const policy = (
        await org.api.post('/api/v1/policies', {
          product_id: product.id,
          name: 'p',
          heartbeat_interval_seconds: 60,
        })
      ).body;
      const license = await licenseOf(policy.id);
      const seat = await activate(org.api, { license_id: license.id, fingerprint: 'm' });
      const seconds = (Date.parse(seat.body.expires_at) - Date.parse(seat.body.created_at)) / 1000;
      expect(seconds).toBe(60);
    });
  });

  describe('check-in', () => {
    it('records last_check_in_at, publishes license.checked_in, and OVERDUE follows the interval', async () => {
      const policy = await newPolicy({ check_in_interval_days: 1 });
      const license = await licenseOf(policy.id);
      expect((await validate({ key: license.serial })).body.code).toBe('VALID');
      await sql(`UPDATE license.licenses SET created_at = now() - interval '2 days' WHERE id = $1`, [
        license.id,
      ]);
      expect((await validate({ key: license.serial })).body).toMatchObject({ valid: false, code: 'OVERDUE' });
      const checkedIn = await org.api.post(`/api/v1/licenses/${license.id}/check-in`);
      expect(checkedIn.status).toBe(200);
      expect(Date.parse(checkedIn.body.last_check_in_at)).toBeGreaterThan(Date.now() - 60_000);
      expect((await validate({ key: license.serial })).body.code).toBe('VALID');
      await recorder.waitFor('license.checked_in', (e) => e.data.id === license.id);
      await org.api.patch(`/api/v1/licenses/${license.id}`, { status: 'suspended' });
      expect((await org.api.post(`/api/v1/licenses/${license.id}/check-in`)).body.code).toBe(
        'license_not_active',
      );
    });
  });

  describe('validate order', () => {
    it('answers EXPIRED before OVERDUE, OVERDUE before the machine checks, OVERAGE after them', async () => {
      const policy = await newPolicy({ check_in_interval_days: 1, max_machines: 1, overage: '2x' });
      const bound = await licenseOf(policy.id, {
        license_type: 'floating',
        hardware_binding: { fingerprint: 'm1' },
      });
      const ago = `UPDATE license.licenses SET created_at = now() - interval '2 days' WHERE id = $1`;
      await sql(ago, [bound.id]);
      expect((await validate({ key: bound.serial, fingerprint: 'other' })).body.code).toBe('OVERDUE');
      await expireLicenseInDatabase(bound.id);
      expect((await validate({ key: bound.serial, fingerprint: 'other' })).body.code).toBe('EXPIRED');

      const license = await licenseOf(policy.id);
      await sql(ago, [license.id]);
      await org.api.post(`/api/v1/licenses/${license.id}/check-in`);
      for (const fingerprint of ['a', 'b'])
        expect((await activate(org.api, { license_id: license.id, fingerprint })).status).toBe(201);
      expect((await validate({ key: license.serial, fingerprint: 'c' })).body.code).toBe('NO_ACTIVATION');
      expect((await validate({ key: license.serial, fingerprint: 'a' })).body).toMatchObject({
        valid: true,
        code: 'OVERAGE',
      });
      await org.api.delete(`/api/v1/licenses/${license.id}`);
      expect((await validate({ key: license.serial, fingerprint: 'a' })).body.code).toBe('REVOKED');
    });
  });

  describe('components', () => {
    it("compares components by the policy's machine_matching; a plain license keeps today's rule", async () => {
      const components = { disk: 'd', cpu: 'c', gpu: 'g' };
      const check = async (machineMatching: string | null, given: Record<string, string>) => {
        const license = machineMatching
          ? await licenseOf((await newPolicy({ machine_matching: machineMatching })).id)
          : await createLicense(org.api, { product_id: productId });
        await activate(org.api, { license_id: license.id, fingerprint: 'm', components });
        return (await validate({ key: license.serial, fingerprint: 'm', components: given })).body.code;
      };
      expect(await check('any', { disk: 'd', cpu: 'x' })).toBe('VALID');
      expect(await check('two', { disk: 'd', cpu: 'x' })).toBe('COMPONENTS_MISMATCH');
      expect(await check('most', { disk: 'd', cpu: 'c' })).toBe('VALID');
      expect(await check('all', { disk: 'd', cpu: 'c' })).toBe('COMPONENTS_MISMATCH');
      expect(await check(null, { disk: 'd', cpu: 'c' })).toBe('VALID');
      expect(await check(null, { disk: 'x' })).toBe('COMPONENTS_MISMATCH');
    });
  });

  describe('processes', () => {
    it('gives exactly 5 of 50 parallel processes a slot against max_processes 5', async () => {
      const license = await licenseOf((await newPolicy({ max_processes: 5 })).id);
      const seat = await activate(org.api, { license_id: license.id, fingerprint: 'm' });
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, pid) =>
          org.api.post(`/api/v1/activations/${seat.body.id}/processes`, { pid }),
        ),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
      for (const answer of answers.filter((a) => a.status !== 201))
        expect(answer.body).toMatchObject({ status: 409, code: 'process_limit_reached' });
      const [first] = answers.filter((a) => a.status === 201);
      expect(first!.body).toEqual({
        id: expect.any(String),
        activation_id: seat.body.id,
        pid: expect.any(Number),
        created_at: expect.any(String),
        last_heartbeat_at: expect.any(String),
        expires_at: null,
      });
      const ended = await org.api.delete(`/api/v1/activations/${seat.body.id}/processes/${first!.body.id}`);
      expect(ended.status).toBe(200);
      expect((await org.api.post(`/api/v1/activations/${seat.body.id}/processes`, { pid: 999 })).status).toBe(
        201,
      );
      expect((await org.api.get(`/api/v1/activations/${seat.body.id}/processes`)).body.total).toBe(5);
      // Deleting the activation deletes its processes.
      await org.api.delete(`/api/v1/activations/${seat.body.id}`);
      expect(
        await sql(`SELECT count(*)::int AS n FROM license.processes WHERE activation_id = $1`, [
          seat.body.id,
        ]),
      ).toEqual([{ n: 0 }]);
    });

    it('lapses a process by the policy heartbeat interval; a heartbeat keeps it', async () => {
      const license = await licenseOf(
        (await newPolicy({ max_processes: 1, heartbeat_interval_seconds: 1 })).id,
      );
      const seat = await activate(org.api, { license_id: license.id, fingerprint: 'm' });
      const kept = await org.api.post(`/api/v1/activations/${seat.body.id}/processes`, { pid: 1 });
      expect(kept.status).toBe(201);
      const beat = await org.api.post(
        `/api/v1/activations/${seat.body.id}/processes/${kept.body.id}/heartbeat`,
      );
      expect(beat.status).toBe(200);
      // The machine keeps beating, the process does not: it lapses, and the sweeper removes it.
      await waitFor(async () => {
        await org.api.post(`/api/v1/activations/${seat.body.id}/heartbeat`);
        return (await org.api.get(`/api/v1/activations/${seat.body.id}/processes`)).body.total === 0;
      });
      const lapsed = await org.api.post(
        `/api/v1/activations/${seat.body.id}/processes/${kept.body.id}/heartbeat`,
      );
      expect(lapsed.status).toBe(404);
      await org.api.post(`/api/v1/activations/${seat.body.id}/heartbeat`);
      expect((await org.api.post(`/api/v1/activations/${seat.body.id}/processes`, { pid: 2 })).status).toBe(
        201,
      );
    });

    it("reaches a token's own activations only: another license's activation is 404", async () => {
      const policy = await newPolicy({ max_processes: 3, license_type: 'floating', max_machines: 3 });
      const mine = await licenseOf(policy.id);
      const theirs = await licenseOf(policy.id);
      const token = (await org.api.post(`/api/v1/licenses/${mine.id}/tokens`, {})).body.token as string;
      const licenseApi = org.api.withKey(token);
      const own = await activate(licenseApi, { license_id: mine.id, fingerprint: 'm1' });
      expect(own.status).toBe(201);
      const other = await activate(org.api, { license_id: theirs.id, fingerprint: 'm2' });
      expect((await licenseApi.post(`/api/v1/activations/${own.body.id}/processes`, { pid: 1 })).status).toBe(
        201,
      );
      expect(
        (await licenseApi.post(`/api/v1/activations/${other.body.id}/processes`, { pid: 1 })).status,
      ).toBe(404);
      const machineApi = org.api.withKey(own.body.machine_token as string);
      const sibling = await activate(licenseApi, { license_id: mine.id, fingerprint: 'm3' });
      expect((await machineApi.post(`/api/v1/activations/${own.body.id}/processes`, { pid: 2 })).status).toBe(
        201,
      );
      expect(
        (await machineApi.post(`/api/v1/activations/${sibling.body.id}/processes`, { pid: 2 })).status,
      ).toBe(404);
      expect((await machineApi.get(`/api/v1/activations/${other.body.id}/processes`)).status).toBe(404);
    });
  });
});
