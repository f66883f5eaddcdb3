import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { EVENT_TYPES } from '@licensing/contracts';
import { sql, waitFor } from '@licensing/shared/testing';
import { createLicense, expireLicenseInDatabase, productWithKeyPair, uniqueCode } from './support/fixtures';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { WebhookReceiver, validSignatures } from './support/webhook-receiver';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Retries in a fraction of a second, timeouts and the disable rule in seconds: the contract's schedule, shrunk. */
const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_MAX_ATTEMPTS: '4',
  WEBHOOK_RETRY_BASE_MS: '150',
  WEBHOOK_RETRY_MAX_MS: '300',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_DISABLE_AFTER_MS: '2500',
  WEBHOOK_SWEEP_MS: '100',
  WEBHOOK_ENDPOINT_CONCURRENCY: '2',
  LICENSE_EXPIRY_SWEEP_MS: '200',
  ACTIVATION_SWEEP_MS: '100',
};

describe('webhooks', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;
  /** Org B's catch-all receiver: it must only ever see org B's events. */
  let otherReceiver: WebhookReceiver;
  const receivers: WebhookReceiver[] = [];
  /** Receivers of org B's endpoints. */
  const receiversOfOther = new Set<WebhookReceiver>();

  const receiver = async (behaviour?: WebhookReceiver['behaviour']): Promise<WebhookReceiver> => {
    const started = await WebhookReceiver.start(behaviour);
    receivers.push(started);
    return started;
  };
  const subscribe = async (
    of: TestOrganization,
    url: string,
    events: string[],
  ): Promise<{ id: string; secret: string }> => {
    const created = await of.api.post('/api/v1/webhooks', { url, events, description: 'test' });
    expect(created.status).toBe(201);
    return created.body;
  };
  const deliveriesOf = async (webhookId: string, query = ''): Promise<any[]> => {
    const response = await org.api.get(`/api/v1/webhooks/${webhookId}/deliveries?per_page=100${query}`);
    expect(response.status).toBe(200);
    return response.body.deliveries;
  };

  beforeAll(async () => {
    stack = await startStack({ env: WEBHOOK_ENV });
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    otherReceiver = await receiver();
    receiversOfOther.add(otherReceiver);
    await subscribe(other, otherReceiver.url, ['*']);
  });
  afterAll(async () => {
    await stack?.close();
    for (const started of receivers) await started.close();
  });

  describe('the API', () => {
    it('creates a webhook with a secret shown once, lists and reads it without, updates and deletes it, and audits each change', async () => {
      const created = await org.api.post('/v1/webhooks', {
        url: 'https://hooks.example.test/licensing',
        events: ['license.created', 'license.revoked'],
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        url: 'https://hooks.example.test/licensing',
        events: ['license.created', 'license.revoked'],
        description: null,
        enabled: true,
        disabled_reason: null,
      });
      expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
      expect(created.body.created_at).toMatch(ISO_MS);
      const { secret, ...view } = created.body;
      const read = await org.api.get(`/api/v1/webhooks/${view.id}`);
      expect(read.body).toEqual(view);
      const listed = await org.api.get('/api/v1/webhooks?per_page=100');
      expect(listed.body.webhooks).toContainEqual(view);
      expect(listed.text).not.toContain(secret);

      const updated = await org.api.put(`/api/v1/webhooks/${view.id}`, {
        events: ['*'],
        description: 'CRM',
        enabled: false,
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ events: ['*'], description: 'CRM', enabled: false });
      expect((await org.api.delete(`/api/v1/webhooks/${view.id}`)).status).toBe(200);
      expect((await org.api.get(`/api/v1/webhooks/${view.id}`)).status).toBe(404);

      const audit = await waitFor(
        async () => {
          const entries = (await org.api.get(`/api/v1/audit-events?resource_id=${view.id}`)).body
            .audit_events;
          return entries.length === 3 && entries;
        },
        { what: 'three audit entries' },
      );
      expect(audit.map((entry: any) => entry.action)).toEqual(['deleted', 'updated', 'created']);
      expect(audit[1].changes).toEqual({
        events: { from: ['license.created', 'license.revoked'], to: ['*'] },
        description: { from: null, to: 'CRM' },
        enabled: { from: true, to: false },
      });
      expect(JSON.stringify(audit)).not.toContain(secret);
    });

    it('refuses an unknown event type, an empty list, a bad URL and unknown fields with 400', async () => {
      for (const body of [
        { url: 'https://hooks.example.test/x', events: ['license.exploded'] },
        { url: 'https://hooks.example.test/x', events: ['licence.*'] },
        { url: 'https://hooks.example.test/x', events: ['license.**'] },
        { url: 'https://hooks.example.test/x', events: ['.*'] },
        { url: 'https://hooks.example.test/x', events: [] },
        { url: 'ftp://hooks.example.test/x', events: ['*'] },
        { url: 'https://user:pw@hooks.example.test/x', events: ['*'] },
        { url: 'https://hooks.example.test/x', events: ['*'], secret: 'whsec_mine' },
      ]) {
        const response = await org.api.post('/api/v1/webhooks', body);
        expect({ body, status: response.status, code: response.body.code }).toEqual({
          body,
          status: 400,
          code: 'validation_failed',
        });
      }
    });
  });

  describe('delivery', () => {
    it('delivers every event type to a catch-all endpoint, signed, with the documented headers and body', async () => {
      const all = await receiver();
      const revocations = await receiver();
      const catchAll = await subscribe(org, all.url, ['*']);
      const onlyRevoked = await subscribe(org, revocations.url, ['license.revoked']);
      const families = await receiver();
      await subscribe(org, families.url, ['license.*', 'policy.created']);

      const { product, keyPair } = await productWithKeyPair(org.api, { activation_heartbeat_interval: 1 });
      expect((await org.api.put(`/api/v1/products/${product.id}`, { name: 'Renamed' })).status).toBe(200);
      const license = await createLicense(org.api, {
        product_id: product.id,
        license_type: 'floating',
        max_seats: 5,
      });
      await org.api.patch(`/api/v1/licenses/${license.id}`, { customer_email: 'ada@example.com' });
      await org.api.patch(`/api/v1/licenses/${license.id}`, { status: 'suspended' });
      await org.api.patch(`/api/v1/licenses/${license.id}`, { status: 'active' });
      const kept = await org.api.post('/api/v1/activations', { license_id: license.id, fingerprint: 'a' });
      expect((await org.api.delete(`/api/v1/activations/${kept.body.id}`)).status).toBe(200);
      // A second seat that sends no heartbeat lapses (activation.expired).
      expect(
        (await org.api.post('/api/v1/activations', { license_id: license.id, fingerprint: 'b' })).status,
      ).toBe(201);
      expect((await org.api.post(`/api/v1/licenses/${license.id}/usage`, { increment: 2 })).status).toBe(200);
      expect((await org.api.delete(`/api/v1/licenses/${license.id}/usage`)).status).toBe(200);
      const entitlement = await org.api.post('/api/v1/entitlements', { code: uniqueCode('ent'), name: 'E' });
      expect((await org.api.patch(`/api/v1/entitlements/${entitlement.body.id}`, { name: 'F' })).status).toBe(
        200,
      );
      expect((await org.api.delete(`/api/v1/entitlements/${entitlement.body.id}`)).status).toBe(200);
      expect((await org.api.post(`/api/v1/licenses/${license.id}/check-in`)).status).toBe(200);
      expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
      const policy = await org.api.post('/api/v1/policies', { product_id: product.id, name: 'Short-lived' });
      expect((await org.api.patch(`/api/v1/policies/${policy.body.id}`, { max_machines: 2 })).status).toBe(
        200,
      );
      expect((await org.api.delete(`/api/v1/policies/${policy.body.id}`)).status).toBe(200);
      const expiring = await createLicense(org.api, { product_id: product.id });
      await expireLicenseInDatabase(expiring.id);
      const doomed = await org.api.post('/api/v1/products', { name: 'Doomed', code: uniqueCode() });
      expect((await org.api.delete(`/api/v1/products/${doomed.body.id}`)).status).toBe(200);
      const spare = await org.api.post('/api/v1/key-pairs', { name: 'spare' });
      expect((await org.api.delete(`/api/v1/key-pairs/${spare.body.id}`)).status).toBe(200);
      const test = await org.api.post(`/api/v1/webhooks/${catchAll.id}/test`);
      expect(test.status).toBe(202);

      const expected = [...EVENT_TYPES.filter((type) => type !== 'webhook.disabled'), 'webhook.test'];
      await waitFor(() => expected.every((type) => all.received.some((hook) => hook.body.type === type)), {
        what: 'every event type',
        timeoutMs: 15_000,
      });
      for (const hook of all.received) {
        expect(hook.headers['content-type']).toBe('application/json');
        expect(hook.headers['user-agent']).toMatch(/^Licensing-Platform-Webhooks\//);
        expect(hook.headers['licensing-event-id']).toBe(hook.body.id);
        expect(hook.headers['licensing-event-type']).toBe(hook.body.type);
        expect(hook.headers['licensing-signature']).toMatch(/^t=\d{10},v1=[0-9a-f]{64}$/);
        expect(validSignatures(hook, catchAll.secret)).toBe(1);
        expect(
          Math.abs(
            Number(/t=(\d+)/.exec(String(hook.headers['licensing-signature']))![1]) - hook.receivedAt / 1000,
          ),
        ).toBeLessThan(5);
        expect(Object.keys(hook.body).sort()).toEqual(['data', 'id', 'occurred_at', 'org_id', 'type']);
        expect(hook.body.org_id).toBe(org.id);
        expect(hook.body.occurred_at).toMatch(ISO_MS);
        expect(hook.body.data).not.toHaveProperty('license_blob');
      }
      const find = (type: string) => all.received.find((hook) => hook.body.type === type)!.body;
      expect(find('key_pair.created').data).not.toHaveProperty('private_key');
      expect(find('license.revoked').data).toMatchObject({ id: license.id, status: 'revoked' });
      expect(find('webhook.test')).toMatchObject({ id: test.body.event_id, data: { id: catchAll.id } });
      expect(find('key_pair.created').data.id).toBe(keyPair.id);

      await waitFor(() => revocations.received.length >= 1, { what: 'the revocation' });
      expect(revocations.received.map((hook) => hook.body.type)).toEqual(['license.revoked']);
      expect(validSignatures(revocations.received[0]!, onlyRevoked.secret)).toBe(1);
      expect(validSignatures(revocations.received[0]!, catchAll.secret)).toBe(0);

      // `license.*` is every license event type, and nothing of another resource.
      const licenseTypes = EVENT_TYPES.filter((type) => type.startsWith('license.'));
      await waitFor(
        () => licenseTypes.every((type) => families.received.some((hook) => hook.body.type === type)),
        { what: 'every license event type through license.*', timeoutMs: 15_000 },
      );
      expect(new Set(families.received.map((hook) => hook.body.type))).toEqual(
        new Set([...licenseTypes, 'policy.created']),
      );
    });

    it('retries a receiver that fails twice, and delivers on the third attempt', async () => {
      const flaky = await receiver((_hook, seenBefore) => (seenBefore < 2 ? 'fail' : 'ok'));
      const webhook = await subscribe(org, flaky.url, ['product.created']);
      const product = await org.api.post('/api/v1/products', { name: 'Flaky', code: uniqueCode() });

      const [delivery] = await waitFor(
        async () => {
          const log = await deliveriesOf(webhook.id);
          return log[0]?.status === 'delivered' && log;
        },
        { what: 'the delivery' },
      );
      expect(delivery).toMatchObject({
        webhook_id: webhook.id,
        event_type: 'product.created',
        status: 'delivered',
        attempts: 3,
        last_status_code: 200,
        last_error: null,
        next_attempt_at: null,
      });
      expect(delivery.delivered_at).toMatch(ISO_MS);
      expect(delivery.last_duration_ms).toBeGreaterThanOrEqual(0);
      expect(flaky.received.map((hook) => [hook.body.data.id, hook.answered])).toEqual([
        [product.body.id, 500],
        [product.body.id, 500],
        [product.body.id, 200],
      ]);
      expect(flaky.received.map((hook) => hook.headers['licensing-delivery-attempt'])).toEqual([
        '1',
        '2',
        '3',
      ]);
      expect(new Set(flaky.received.map((hook) => hook.body.id))).toEqual(new Set([delivery.event_id]));

      // One delivery, with the body every attempt sent.
      const one = await org.api.get(`/api/v1/webhook-deliveries/${delivery.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual({ ...delivery, payload: flaky.received[2]!.body });
      expect(JSON.stringify(one.body.payload)).toBe(flaky.received[2]!.raw);
      expect((await org.api.get(`/api/v1/webhook-deliveries/${randomUUID()}`)).status).toBe(404);
    });

    it('never sends an endpoint an event that occurred before the endpoint existed', async () => {
      // A fan-out that lags behind (a busy or restarted webhook service) reads an event after an
      // endpoint was created: the endpoint's creation time says it must not receive it. Moving
      // the creation time an hour ahead makes every event from now on such an event.
      const late = await receiver();
      const webhook = await subscribe(org, late.url, ['product.created']);
      const moveCreation = (interval: string) =>
        sql(`UPDATE webhook.endpoints SET created_at = created_at + $2::interval WHERE id = $1`, [
          webhook.id,
          interval,
        ]);
      await moveCreation('1 hour');
      const before = await org.api.post('/api/v1/products', { name: 'Before', code: uniqueCode() });
      expect(before.status).toBe(201);
      await moveCreation('-2 hours');
      const after = await org.api.post('/api/v1/products', { name: 'After', code: uniqueCode() });
      expect(after.status).toBe(201);

      // The events are fanned out in order: once the later one is delivered, the earlier one was
      // passed over.
      const log = await waitFor(
        async () => {
          const deliveries = await deliveriesOf(webhook.id);
          return deliveries[0]?.status === 'delivered' && deliveries;
        },
        { what: 'the later event delivered' },
      );
      expect(log.map((delivery) => [delivery.event_type, delivery.status])).toEqual([
        ['product.created', 'delivered'],
      ]);
      expect(late.received.map((hook) => hook.body.data.id)).toEqual([after.body.id]);
    });

    it('fails a delivery after its last attempt, shows why in the log, and redelivers it on request', async () => {
      let healthy = false;
      const down = await receiver(() => (healthy ? 'ok' : 'fail'));
      const webhook = await subscribe(org, down.url, ['product.created']);
      await org.api.post('/api/v1/products', { name: 'Down', code: uniqueCode() });

      const [failed] = await waitFor(
        async () => {
          const log = await deliveriesOf(webhook.id, '&status=failed');
          return log.length === 1 && log;
        },
        { what: 'the failed delivery' },
      );
      expect(failed).toMatchObject({
        status: 'failed',
        attempts: 4,
        last_status_code: 500,
        next_attempt_at: null,
      });
      expect(failed.last_error).toBe('HTTP 500: boom');
      expect(await deliveriesOf(webhook.id, '&status=pending')).toEqual([]);
      expect(down.received).toHaveLength(4);

      healthy = true;
      const redelivered = await org.api.post(`/v1/webhook-deliveries/${failed.id}/redeliver`);
      expect(redelivered.status).toBe(202);
      expect(redelivered.body).toMatchObject({ id: failed.id, status: 'pending' });
      await waitFor(async () => (await deliveriesOf(webhook.id))[0].status === 'delivered', {
        what: 'the redelivery',
      });
      expect((await deliveriesOf(webhook.id))[0]).toMatchObject({ attempts: 5, last_status_code: 200 });
      expect(down.received.map((hook) => hook.body.id)).toEqual(Array(5).fill(failed.event_id));
      // Redelivering what was delivered sends it again, with the same event id.
      expect((await org.api.post(`/api/v1/webhook-deliveries/${failed.id}/redeliver`)).status).toBe(202);
      await waitFor(() => down.received.length === 6, { what: 'the second redelivery' });
      expect(down.received[5]!.body.id).toBe(failed.event_id);
    });

    it('signs with both secrets for a day after a rotation, the new one first', async () => {
      const rotating = await receiver();
      const webhook = await subscribe(org, rotating.url, ['product.created']);
      const rotated = await org.api.post(`/api/v1/webhooks/${webhook.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).toMatch(/^whsec_/);
      expect(rotated.body.secret).not.toBe(webhook.secret);
      const expiresIn = Date.parse(rotated.body.previous_secret_expires_at) - Date.now();
      expect(expiresIn).toBeGreaterThan(23.9 * 3_600_000);
      expect(expiresIn).toBeLessThanOrEqual(24 * 3_600_000);

      expect((await org.api.post(`/api/v1/webhooks/${webhook.id}/test`)).status).toBe(202);
      await waitFor(() => rotating.received.length === 1, { what: 'the test event' });
      const [hook] = rotating.received;
      expect(hook!.headers['licensing-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
      const [, first, second] = String(hook!.headers['licensing-signature']).split(',');
      expect(
        validSignatures(
          {
            ...hook!,
            headers: {
              'licensing-signature': `t=${/t=(\d+)/.exec(String(hook!.headers['licensing-signature']))![1]},${first}`,
            },
          },
          rotated.body.secret,
        ),
      ).toBe(1);
      expect(
        validSignatures(
          {
            ...hook!,
            headers: {
              'licensing-signature': `t=${/t=(\d+)/.exec(String(hook!.headers['licensing-signature']))![1]},${second}`,
            },
          },
          webhook.secret,
        ),
      ).toBe(1);
      const audit = await waitFor(
        async () =>
          (await org.api.get(`/api/v1/audit-events?resource_id=${webhook.id}&action=rotated`)).body
            .audit_events[0],
        { what: 'the rotation audit entry' },
      );
      expect(JSON.stringify(audit)).not.toContain(rotated.body.secret);
    });

    it('disables an endpoint whose every attempt failed for the configured time, and publishes webhook.disabled', async () => {
      const watcher = await receiver();
      await subscribe(org, watcher.url, ['webhook.disabled']);
      const broken = await receiver(() => 'fail');
      const webhook = await subscribe(org, broken.url, ['product.created']);
      await org.api.post('/api/v1/products', { name: 'Broken', code: uniqueCode() });

      const disabled = await waitFor(
        async () => {
          const read = (await org.api.get(`/api/v1/webhooks/${webhook.id}`)).body;
          return read.enabled === false && read;
        },
        { what: 'the endpoint to be disabled', timeoutMs: 15_000 },
      );
      expect(disabled.disabled_reason).toMatch(/failed/);
      await waitFor(() => watcher.received.length === 1, { what: 'webhook.disabled' });
      expect(watcher.received[0]!.body).toMatchObject({
        type: 'webhook.disabled',
        org_id: org.id,
        data: { id: webhook.id, enabled: false },
      });
      // Disabled: no test, no redelivery, until it is enabled again.
      expect((await org.api.post(`/api/v1/webhooks/${webhook.id}/test`)).status).toBe(409);
      const enabled = await org.api.put(`/api/v1/webhooks/${webhook.id}`, { enabled: true });
      expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null });
    });
  });

  describe('isolation', () => {
    it('never delays a healthy endpoint behind one that hangs or fails, in the same organization or another', async () => {
      const measured = await stack.newOrganization();
      const healthy = await receiver();
      const hanging = await receiver(() => 'hang');
      const failing = await receiver(() => 'fail');
      const elsewhere = await receiver();
      for (const url of [healthy.url, hanging.url, failing.url])
        await subscribe(measured, url, ['product.created']);
      receiversOfOther.add(elsewhere);
      await subscribe(other, elsewhere.url, ['product.created']);

      const EVENTS = 20;
      for (let i = 0; i < EVENTS; i++) {
        await Promise.all([
          measured.api.post('/api/v1/products', { name: `Load ${i}`, code: uniqueCode() }),
          other.api.post('/api/v1/products', { name: `Load ${i}`, code: uniqueCode() }),
        ]);
      }
      await waitFor(() => healthy.received.length === EVENTS && elsewhere.received.length >= EVENTS, {
        what: 'every healthy delivery',
      });
      const latencies = (hooks: typeof healthy.received) =>
        hooks.map((hook) => hook.receivedAt - Date.parse(hook.body.occurred_at)).sort((a, b) => a - b);
      const sameOrg = latencies(healthy.received);
      const otherOrg = latencies(elsewhere.received.slice(-EVENTS));
      const figures = {
        events: EVENTS,
        same_org_p50_ms: sameOrg[Math.floor(EVENTS / 2)],
        same_org_max_ms: sameOrg[EVENTS - 1],
        other_org_p50_ms: otherOrg[Math.floor(EVENTS / 2)],
        other_org_max_ms: otherOrg[EVENTS - 1],
        hanging_requests_so_far: hanging.received.length,
        failing_requests_so_far: failing.received.length,
      };
      process.stdout.write(`webhook isolation: ${JSON.stringify(figures)}\n`);
      // The hanging receiver holds its two slots for the 2 s timeout each time: 20 events would take
      // it 20 s. The healthy endpoints got every event well within a second of it happening.
      expect(figures.hanging_requests_so_far).toBeLessThan(EVENTS);
      expect(figures.same_org_max_ms).toBeLessThan(1_500);
      expect(figures.other_org_max_ms).toBeLessThan(1_500);
    });

    it("never sends an organization's endpoints another organization's events", async () => {
      await other.api.post('/api/v1/key-pairs', { name: 'marker' });
      await waitFor(() => otherReceiver.received.some((hook) => hook.body.type === 'key_pair.created'), {
        what: "B's own event",
      });
      expect(otherReceiver.received.length).toBeGreaterThan(0);
      for (const hook of otherReceiver.received) expect(hook.body.org_id).toBe(other.id);
      for (const hook of receivers.filter((r) => !receiversOfOther.has(r)).flatMap((r) => r.received)) {
        expect(otherReceiver.received.map((h) => h.body.id)).not.toContain(hook.body.id);
      }
      // B cannot see or touch A's webhooks.
      const [aWebhook] = (await org.api.get('/api/v1/webhooks?per_page=1')).body.webhooks;
      expect((await other.api.get(`/api/v1/webhooks/${aWebhook.id}`)).status).toBe(404);
      expect((await other.api.get(`/api/v1/webhooks/${aWebhook.id}/deliveries`)).status).toBe(404);
    });
  });

  describe('a crash', () => {
    let child: ChildProcess | undefined;
    const root = path.join(__dirname, '../../..');
    /** The webhook service as a process of its own, on the stack's database and namespace. */
    const startProcess = async (): Promise<ChildProcess> => {
      const started = spawn(
        process.execPath,
        ['-r', '@swc-node/register', 'apps/webhook-service/src/main.ts'],
        {
          cwd: root,
          env: {
            ...process.env,
            ...stack.env,
            SWC_NODE_PROJECT: path.join(root, 'tsconfig.json'),
            WEBHOOK_RETRY_BASE_MS: '1000',
            WEBHOOK_RETRY_MAX_MS: '1000',
            WEBHOOK_TIMEOUT_MS: '1000',
            // What is tested is a crash, not giving up: the stack's settings would disable the
            // endpoint once it has failed for 2.5 s, which a restart on a loaded machine outlasts,
            // and would end each delivery after 4 attempts.
            WEBHOOK_MAX_ATTEMPTS: '50',
            WEBHOOK_DISABLE_AFTER_MS: '3600000',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      // Its output, for the message of a failure (a child that exits at boot says why there).
      started.stdout!.on('data', (chunk: Buffer) => (childOutput += chunk.toString()));
      started.stderr!.on('data', (chunk: Buffer) => (childOutput += chunk.toString()));
      return started;
    };
    let childOutput = '';
    afterAll(() => {
      if (child?.pid && child.exitCode === null && child.signalCode === null)
        process.kill(child.pid, 'SIGKILL');
    });

    it('still delivers after the webhook service is killed mid-retry and restarted, each event exactly once', async () => {
      try {
        await stack.stopService('webhook-service');
        child = await startProcess();
        await waitFor(async () => (await org.api.get('/api/v1/webhooks')).status === 200, {
          what: 'the webhook service process to answer',
          timeoutMs: 20_000,
        });
        let healthy = false;
        const flaky = await receiver(() => (healthy ? 'ok' : 'fail'));
        const webhook = await subscribe(org, flaky.url, ['product.created']);
        const products = await Promise.all(
          Array.from({ length: 5 }, (_, i) =>
            org.api.post('/api/v1/products', { name: `Crash ${i}`, code: uniqueCode() }),
          ),
        );
        const productIds = products.map((product) => product.body.id as string);
        // Every event has failed at least once, and none has been delivered: all are mid-retry.
        await waitFor(
          () => productIds.every((id) => flaky.received.some((hook) => hook.body.data.id === id)),
          {
            what: 'a failed attempt of every event',
            timeoutMs: 20_000,
          },
        );
        process.kill(child.pid!, 'SIGKILL');
        await new Promise((resolve) => child!.once('exit', resolve));
        const seenBeforeRestart = flaky.received.length;
        healthy = true;
        child = await startProcess();

        // The restarted service compiles its TypeScript as it boots: slow on a loaded machine.
        await waitFor(() => new Set(flaky.deliveredIds()).size === 5, {
          what: 'every event delivered after the restart',
          timeoutMs: 45_000,
        });
        const delivered = flaky.deliveredIds();
        expect(delivered).toHaveLength(5);
        expect(new Set(flaky.received.map((hook) => hook.body.data.id))).toEqual(new Set(productIds));
        expect(flaky.received.length).toBeGreaterThan(seenBeforeRestart);
        await waitFor(
          async () => (await deliveriesOf(webhook.id)).every((delivery) => delivery.status === 'delivered'),
          { what: 'the log to show every delivery delivered' },
        );
        process.kill(child.pid!, 'SIGTERM');
        await new Promise((resolve) => child!.once('exit', resolve));
      } catch (error) {
        throw new Error(
          `${(error as Error).message}\nThe webhook service's output:\n${childOutput.slice(-4_000)}`,
        );
      }
    }, 120_000);
  });
});
