import { ApiClient, EventRecorder, waitFor } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import {
  apiKeyWithScopes,
  createLicense,
  decodeBlob,
  expireLicenseInDatabase,
  productWithKeyPair,
  sql,
  uniqueCode,
} from './support/fixtures';
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
  const newEntitlement = async () => {
    const code = uniqueCode('ent');
    expect((await org.api.post('/api/v1/entitlements', { code, name: code })).status).toBe(201);
    return code;
  };
  const usageOf = (api: ApiClient, licenseId: string, increment: number) =>
    api.post(`/api/v1/licenses/${licenseId}/usage`, { increment });
  /** Moves the start of the license's count back, as if its period had ended `interval` ago. */
  const countSince = (licenseId: string, interval: string) =>
    sql(`UPDATE license.licenses SET uses_period_start = now() - $2::interval WHERE id = $1`, [
      licenseId,
      interval,
    ]);

  beforeAll(async () => {
    stack = await startStack({
      // The uses-reset sweeper stays out of the way: these tests prove the increment's own reset.
      env: {
        ACTIVATION_SWEEP_MS: '100',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        USES_RESET_SWEEP_MS: '3600000',
      },
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
        max_uses: null,
        uses_reset: null,
        heartbeat_interval_seconds: null,
        heartbeat_grace_seconds: 0,
        check_in_interval_days: null,
        overage: 'none',
        machine_matching: 'all',
        entitlements: [],
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
        [{ max_uses: -1 }, 'max_uses'],
        [{ max_uses: 2_000_000_001 }, 'max_uses'],
        [{ max_uses: 1.5 }, 'max_uses'],
        [{ uses_reset: 'year' }, 'uses_reset'],
        [{ entitlements: 'pdf' }, 'entitlements'],
        [{ entitlements: ['Bad Code'] }, 'entitlements'],
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

  describe('entitlements of a policy', () => {
    it('grants a sorted list on create, replaces it on PATCH, and refuses unknown codes (422)', async () => {
      const [a, b, c] = [await newEntitlement(), await newEntitlement(), await newEntitlement()];
      const policy = await newPolicy({ entitlements: [c, a, a] });
      expect(policy.entitlements).toEqual([a, c].sort());
      expect((await org.api.get(`/api/v1/policies/${policy.id}`)).body.entitlements).toEqual([a, c].sort());
      const listed = await org.api.get(`/api/v1/policies?product_id=${productId}&per_page=100`);
      expect(listed.body.policies.find((p: { id: string }) => p.id === policy.id).entitlements).toEqual(
        [a, c].sort(),
      );
      const replaced = await org.api.patch(`/api/v1/policies/${policy.id}`, { entitlements: [b] });
      expect(replaced.body.entitlements).toEqual([b]);
      // A PATCH without the field keeps the list.
      expect((await org.api.patch(`/api/v1/policies/${policy.id}`, { name: 'n' })).body.entitlements).toEqual(
        [b],
      );

      const stranger = await stack.newOrganization();
      const theirs = uniqueCode('theirs');
      await stranger.api.post('/api/v1/entitlements', { code: theirs, name: theirs });
      const unknown = await org.api.post('/api/v1/policies', {
        product_id: productId,
        name: 'x',
        entitlements: [a, 'no-such-thing', theirs],
      });
      expect(unknown.body).toMatchObject({ status: 422, code: 'unknown_entitlement' });
      expect(unknown.body.detail).toContain('no-such-thing');
      expect(unknown.body.detail).toContain(theirs);
      expect(unknown.body.detail).not.toContain(a);
      const patched = await org.api.patch(`/api/v1/policies/${policy.id}`, {
        entitlements: ['no-such-thing'],
      });
      expect(patched.body).toMatchObject({ status: 422, code: 'unknown_entitlement' });
      expect((await org.api.get(`/api/v1/policies/${policy.id}`)).body.entitlements).toEqual([b]);
      await recorder.waitFor(
        'policy.updated',
        (e) => e.data.id === policy.id && e.data.entitlements[0] === b,
      );
    });

    it("gives licenses the union of the policy's and their own, in answers, files and validate", async () => {
      const [granted, own, later] = [await newEntitlement(), await newEntitlement(), await newEntitlement()];
      const policy = await newPolicy({ entitlements: [granted] });
      const license = await licenseOf(policy.id);
      expect(license.entitlements).toEqual([granted]);
      expect(decodeBlob(license.license_blob).claims.entitlements).toEqual([granted]);
      const attached = await org.api.post(`/api/v1/licenses/${license.id}/entitlements`, { codes: [own] });
      expect(attached.body.entitlements).toEqual([granted, own].sort());
      expect(decodeBlob(attached.body.license_blob).claims.entitlements).toEqual([granted, own].sort());

      // Detaching a code the license holds only through its policy changes nothing.
      const detached = await org.api.request('DELETE', `/api/v1/licenses/${license.id}/entitlements`, {
        codes: [granted],
      });
      expect(detached.status).toBe(200);
      expect(detached.body.entitlements).toEqual([granted, own].sort());
      expect(detached.body.license_blob).toBe(attached.body.license_blob);

      expect((await validate({ key: license.serial, entitlements: [granted, own] })).body.code).toBe('VALID');
      expect((await validate({ key: license.serial, entitlements: [later] })).body).toMatchObject({
        valid: false,
        code: 'ENTITLEMENTS_MISSING',
      });

      // A policy change applies at once online; the file issued before keeps its claims.
      await org.api.patch(`/api/v1/policies/${policy.id}`, { entitlements: [later] });
      const now = (await org.api.get(`/api/v1/licenses/${license.id}`)).body;
      expect(now.entitlements).toEqual([later, own].sort());
      expect(decodeBlob(now.license_blob).claims.entitlements).toEqual([granted, own].sort());
      expect((await validate({ key: license.serial, entitlements: [later] })).body.code).toBe('VALID');
      expect((await validate({ key: license.serial, entitlements: [granted] })).body.code).toBe(
        'ENTITLEMENTS_MISSING',
      );
      const summary = (await validate({ key: license.serial })).body.license;
      expect(summary.entitlements).toEqual([later, own].sort());
      await recorder.waitFor(
        'license.updated',
        (e) => e.data.id === license.id && e.data.entitlements.join() === [later, own].sort().join(),
      );

      // A checkout signs the union as it is now.
      const checkout = await org.api.post(`/api/v1/licenses/${license.id}/checkout`, {});
      expect(checkout.status).toBe(200);
      expect(decodeBlob(checkout.body.license_blob).claims.entitlements).toEqual([later, own].sort());
    });
  });

  describe('max_uses of a policy', () => {
    it('is inherited unless the license sets it; a policy PATCH moves the inherited ones only', async () => {
      const policy = await newPolicy({ max_uses: 10 });
      expect(policy.max_uses).toBe(10);
      const inherits = await licenseOf(policy.id);
      const own = await licenseOf(policy.id, { max_uses: 5 });
      const unlimited = await licenseOf(policy.id, { max_uses: null });
      const patched = await licenseOf(policy.id);
      const revoked = await licenseOf(policy.id);
      expect([inherits, own, unlimited].map((l) => l.max_uses)).toEqual([10, 5, null]);
      expect((await org.api.patch(`/api/v1/licenses/${patched.id}`, { max_uses: 7 })).body.max_uses).toBe(7);
      await org.api.delete(`/api/v1/licenses/${revoked.id}`);

      const changed = await org.api.patch(`/api/v1/policies/${policy.id}`, { max_uses: 20 });
      expect(changed.body.max_uses).toBe(20);
      const maxUsesOf = async (id: string) => (await org.api.get(`/api/v1/licenses/${id}`)).body.max_uses;
      expect(await maxUsesOf(inherits.id)).toBe(20);
      expect(await maxUsesOf(own.id)).toBe(5);
      expect(await maxUsesOf(unlimited.id)).toBeNull();
      expect(await maxUsesOf(patched.id)).toBe(7);
      expect(await maxUsesOf(revoked.id)).toBe(10);
      await recorder.waitFor('license.updated', (e) => e.data.id === inherits.id && e.data.max_uses === 20);
      // The increment reads the moved limit.
      expect((await usageOf(org.api, inherits.id, 20)).body).toEqual({ uses: 20, max_uses: 20 });
      expect((await usageOf(org.api, inherits.id, 1)).body.code).toBe('usage_limit_exceeded');

      // Back to no limit, and only the inherited license follows; max_seats is left as it was.
      await org.api.patch(`/api/v1/policies/${policy.id}`, { max_uses: null });
      expect(await maxUsesOf(inherits.id)).toBeNull();
      expect(await maxUsesOf(own.id)).toBe(5);
      expect((await org.api.get(`/api/v1/licenses/${inherits.id}`)).body.max_seats).toBe(1);
      const moved = recorder.of('license.updated', (e) => e.data.id === own.id || e.data.id === unlimited.id);
      expect(moved).toEqual([]);
    });
  });

  describe('usage resets', () => {
    it('counts from 0 at the first increment of a new period, and not before', async () => {
      const policy = await newPolicy({ max_uses: 10, uses_reset: 'day' });
      const license = await licenseOf(policy.id);
      expect((await usageOf(org.api, license.id, 10)).body).toEqual({ uses: 10, max_uses: 10 });
      expect((await usageOf(org.api, license.id, 1)).body.code).toBe('usage_limit_exceeded');
      // Still today: a count that began an hour ago (or at 00:00) is today's.
      await sql(
        `UPDATE license.licenses SET uses_period_start = date_trunc('day', now(), 'UTC') WHERE id = $1`,
        [license.id],
      );
      expect((await usageOf(org.api, license.id, 1)).body.code).toBe('usage_limit_exceeded');

      // The count began yesterday: the day has turned.
      await countSince(license.id, '1 day');
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.uses).toBe(10);
      expect((await usageOf(org.api, license.id, 3)).body).toEqual({ uses: 3, max_uses: 10 });
      expect((await usageOf(org.api, license.id, 2)).body).toEqual({ uses: 5, max_uses: 10 });
      const [row] = await sql(
        `SELECT uses_period_start = date_trunc('day', now(), 'UTC') AS today FROM license.licenses WHERE id = $1`,
        [license.id],
      );
      expect(row.today).toBe(true);
      await recorder.waitFor(
        'license.usage_incremented',
        (e) => e.data.id === license.id && e.data.uses === 3 && e.data.increment === 3,
      );

      // Monthly: a count from 40 days ago is last month's; one from this month's start is not.
      const monthly = await licenseOf((await newPolicy({ max_uses: 2, uses_reset: 'month' })).id);
      await usageOf(org.api, monthly.id, 2);
      await sql(
        `UPDATE license.licenses SET uses_period_start = date_trunc('month', now(), 'UTC') WHERE id = $1`,
        [monthly.id],
      );
      expect((await usageOf(org.api, monthly.id, 1)).body.code).toBe('usage_limit_exceeded');
      await countSince(monthly.id, '40 days');
      expect((await usageOf(org.api, monthly.id, 1)).body).toEqual({ uses: 1, max_uses: 2 });

      // Without uses_reset, uses never go back to 0.
      const never = await licenseOf((await newPolicy({ max_uses: 1 })).id);
      await usageOf(org.api, never.id, 1);
      await countSince(never.id, '400 days');
      expect((await usageOf(org.api, never.id, 1)).body.code).toBe('usage_limit_exceeded');
    });

    it('a policy that gains uses_reset applies it to its licenses at once', async () => {
      const policy = await newPolicy({ max_uses: 1 });
      const license = await licenseOf(policy.id);
      await usageOf(org.api, license.id, 1);
      await countSince(license.id, '8 days');
      expect((await usageOf(org.api, license.id, 1)).body.code).toBe('usage_limit_exceeded');
      await org.api.patch(`/api/v1/policies/${policy.id}`, { uses_reset: 'week' });
      expect((await usageOf(org.api, license.id, 1)).body).toEqual({ uses: 1, max_uses: 1 });
    });

    it('is exact right after a rollover: 200 parallel increments against max_uses 50, exactly 50 succeed', async () => {
      const policy = await newPolicy({ max_uses: 50, uses_reset: 'day' });
      const license = await licenseOf(policy.id);
      await usageOf(org.api, license.id, 50);
      await countSince(license.id, '1 day');
      const { api: client } = await apiKeyWithScopes(org.api, ['client']);
      const answers = await Promise.all(Array.from({ length: 200 }, () => usageOf(client, license.id, 1)));
      const counted = answers.filter((a) => a.status === 200);
      expect(counted).toHaveLength(50);
      for (const answer of answers.filter((a) => a.status !== 200))
        expect(answer.body.code).toBe('usage_limit_exceeded');
      expect(counted.map((a) => a.body.uses as number).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.uses).toBe(50);
    }, 60_000);
  });
});
