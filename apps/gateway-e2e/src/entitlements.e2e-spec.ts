import { randomUUID } from 'node:crypto';
import { connect } from 'nats';
import { verifyLicense } from '@licensing/license-verifier';
import {
  ApiClient,
  ApiResponse,
  EventRecorder,
  TEST_NATS_URL,
  sql,
  waitFor,
} from '@licensing/shared/testing';
import {
  apiKeyWithScopes,
  createLicense,
  decodeBlob,
  expireLicenseInDatabase,
  productWithKeyPair,
  uniqueCode,
} from './support/fixtures';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * Entitlements (a catalog of codes that licenses hold, carried in their files) and metered usage
 * (a license's uses against its max_uses), end to end through the gateway.
 */

const problem = (response: ApiResponse): string => `${response.status} ${response.body?.code}`;
/** The fields a 400 names, each once (a field that breaks two rules has two errors). */
const fieldsOf = (response: ApiResponse): string[] => [
  ...new Set(((response.body?.errors ?? []) as { field: string }[]).map((error) => error.field)),
];

describe('entitlements and metered usage', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;
  let recorder: EventRecorder;
  let receiver: WebhookReceiver;
  let productId: string;
  let publicKey: string;

  const newEntitlement = async (code = uniqueCode('ent'), name = `Entitlement ${code}`) => {
    const created = await org.api.post('/api/v1/entitlements', { code, name });
    expect(created.status).toBe(201);
    return created.body;
  };
  const newLicense = (body: Record<string, unknown> = {}) =>
    createLicense(org.api, { product_id: productId, ...body });
  const usageOf = (api: ApiClient, licenseId: string, increment?: number) =>
    api.post(`/api/v1/licenses/${licenseId}/usage`, increment === undefined ? {} : { increment });

  beforeAll(async () => {
    stack = await startStack({
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_MS: '50', USES_RESET_SWEEP_MS: '100' },
    });
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    recorder = await EventRecorder.start(stack.namespace);
    receiver = await WebhookReceiver.start();
    const webhook = await org.api.post('/api/v1/webhooks', {
      url: receiver.url,
      events: [
        'entitlement.created',
        'entitlement.updated',
        'entitlement.deleted',
        'license.usage_incremented',
        'license.usage_reset',
      ],
    });
    expect(webhook.status).toBe(201);
    const { product } = await productWithKeyPair(org.api);
    productId = product.id;
    publicKey = (await org.api.get(`/api/v1/products/${productId}/public-key`)).body.public_key;
  });
  afterAll(async () => {
    await recorder.stop();
    await receiver.close();
    await stack.close();
  });

  describe('the catalog', () => {
    it('creates, reads, lists newest first, renames and deletes an entitlement, under both prefixes', async () => {
      const first = await newEntitlement(uniqueCode('export.pdf'), 'Export to PDF');
      expect(first).toEqual({
        id: expect.any(String),
        code: first.code,
        name: 'Export to PDF',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
      const second = await newEntitlement(`${uniqueCode('sso')}_saml`);
      expect((await org.api.get(`/v1/entitlements/${first.id}`)).body).toEqual(first);

      const page = await org.api.get('/api/v1/entitlements?per_page=2');
      expect(page.status).toBe(200);
      expect(page.body.entitlements.map((e: { id: string }) => e.id)).toEqual([second.id, first.id]);
      expect(page.body.total).toBeGreaterThanOrEqual(2);
      expect((await org.api.get('/api/v1/entitlements?per_page=101')).status).toBe(400);

      const renamed = await org.api.patch(`/api/v1/entitlements/${first.id}`, { name: 'Export to PDF/A' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual({ ...first, name: 'Export to PDF/A' });

      const deleted = await org.api.delete(`/api/v1/entitlements/${second.id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body.message).toEqual(expect.any(String));
      expect(problem(await org.api.get(`/api/v1/entitlements/${second.id}`))).toBe('404 not_found');

      await recorder.waitFor('entitlement.created', (e) => e.data.id === first.id);
      await recorder.waitFor('entitlement.updated', (e) => e.data.name === 'Export to PDF/A');
      await recorder.waitFor('entitlement.deleted', (e) => e.data.id === second.id);
      await waitFor(
        async () =>
          (await org.api.get(`/api/v1/audit-events?resource_type=entitlement&resource_id=${first.id}`)).body
            .total === 2,
        { what: 'the created and updated audit entries' },
      );
      const audit = await org.api.get(
        `/api/v1/audit-events?resource_type=entitlement&resource_id=${first.id}`,
      );
      expect(audit.body.audit_events.map((e: { action: string }) => e.action)).toEqual([
        'updated',
        'created',
      ]);
      expect(audit.body.audit_events[0].changes).toEqual({
        name: { from: 'Export to PDF', to: 'Export to PDF/A' },
      });
      await waitFor(
        () =>
          ['entitlement.created', 'entitlement.updated', 'entitlement.deleted'].every((type) =>
            receiver.received.some((hook) => hook.body.type === type),
          ),
        { what: 'the catalog events delivered to the webhook' },
      );
    });

    it('refuses bad codes and names with a 400 naming the field', async () => {
      for (const code of ['', 'Upper', 'two..dots', '-lead', 'trail_', 'sp ace', 'x'.repeat(101), 7]) {
        const response = await org.api.post('/api/v1/entitlements', { code, name: 'Bad' });
        expect({ code, status: response.status, fields: fieldsOf(response) }).toEqual({
          code,
          status: 400,
          fields: ['code'],
        });
      }
      for (const body of [
        { code: 'fine' },
        { code: 'fine', name: '' },
        { code: 'fine', name: 'x'.repeat(256) },
      ]) {
        const response = await org.api.post('/api/v1/entitlements', body);
        expect({ status: response.status, fields: fieldsOf(response) }).toEqual({
          status: 400,
          fields: ['name'],
        });
      }
      const unknownField = await org.api.post('/api/v1/entitlements', {
        code: 'fine',
        name: 'Fine',
        extra: 1,
      });
      expect(problem(unknownField)).toBe('400 validation_failed');
      const ok = await org.api.post('/api/v1/entitlements', { code: uniqueCode('a.b_c-d'), name: 'Fine' });
      expect(ok.status).toBe(201);
    });

    it('keeps codes unique per organization (409) but lets another organization use the same code', async () => {
      const code = uniqueCode('dup');
      await newEntitlement(code);
      expect(problem(await org.api.post('/api/v1/entitlements', { code, name: 'Again' }))).toBe(
        '409 conflict',
      );
      expect((await other.api.post('/api/v1/entitlements', { code, name: 'Theirs' })).status).toBe(201);
    });

    it('never changes a code: sending it to PATCH is a 400, even unchanged', async () => {
      const entitlement = await newEntitlement();
      const response = await org.api.patch(`/api/v1/entitlements/${entitlement.id}`, {
        code: entitlement.code,
      });
      expect(problem(response)).toBe('400 validation_failed');
      expect((await org.api.get(`/api/v1/entitlements/${entitlement.id}`)).body).toEqual(entitlement);
    });

    it("answers another organization's entitlement 404, and a malformed id 400", async () => {
      const entitlement = await newEntitlement();
      expect(problem(await other.api.get(`/api/v1/entitlements/${entitlement.id}`))).toBe('404 not_found');
      expect(problem(await other.api.patch(`/api/v1/entitlements/${entitlement.id}`, { name: 'X' }))).toBe(
        '404 not_found',
      );
      expect(problem(await other.api.delete(`/api/v1/entitlements/${entitlement.id}`))).toBe('404 not_found');
      const theirs = await other.api.get('/api/v1/entitlements?per_page=100');
      expect(theirs.body.entitlements.map((e: { id: string }) => e.id)).not.toContain(entitlement.id);
      expect(problem(await org.api.get('/api/v1/entitlements/not-a-uuid'))).toBe('400 validation_failed');
    });

    it('replays a create sent again with the same Idempotency-Key', async () => {
      const body = { code: uniqueCode('idem'), name: 'Once' };
      const headers = { 'idempotency-key': `ent-${body.code}` };
      const first = await org.api.post('/api/v1/entitlements', body, headers);
      const again = await org.api.post('/api/v1/entitlements', body, headers);
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
    });
  });

  describe('license entitlements', () => {
    it('attaches and detaches by code: sorted in the license, in its next file and in verify', async () => {
      const [pdf, sync] = [
        await newEntitlement(uniqueCode('pdf')),
        await newEntitlement(uniqueCode('cloud')),
      ];
      const license = await newLicense();
      expect(license).toMatchObject({ entitlements: [], uses: 0, max_uses: null });
      // A license without entitlements signs no claim at all: its files are as they were.
      expect(decodeBlob(license.license_blob).claims).not.toHaveProperty('entitlements');

      const attached = await org.api.post(`/api/v1/licenses/${license.id}/entitlements`, {
        codes: [sync.code, pdf.code, pdf.code],
      });
      expect(attached.status).toBe(200);
      const sorted = [pdf.code, sync.code].sort();
      expect(attached.body.entitlements).toEqual(sorted);
      expect(attached.body.license_blob).not.toBe(license.license_blob);
      expect(decodeBlob(attached.body.license_blob).claims.entitlements).toEqual(sorted);
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.entitlements).toEqual(sorted);
      const listed = await org.api.get(`/api/v1/licenses?serial=${license.serial}`);
      expect(listed.body.licenses[0].entitlements).toEqual(sorted);

      const download = await fetch(`${stack.baseUrl}/api/v1/licenses/${license.id}/download`, {
        headers: { authorization: `Bearer ${org.api.apiKey}` },
      });
      const file = Buffer.from(await download.arrayBuffer());
      expect(decodeBlob(file.toString('base64')).claims.entitlements).toEqual(sorted);
      const offline = await verifyLicense(file, publicKey);
      expect(offline.valid).toBe(true);
      expect(offline.license?.entitlements).toEqual(sorted);

      const verified = await org.api.post('/api/v1/licenses/verify', {
        product_id: productId,
        license_blob: attached.body.license_blob,
      });
      expect(verified.body).toMatchObject({ valid: true, license: { entitlements: sorted } });
      // A file issued before the attach keeps its claims: verify reports what the file carries.
      const old = await org.api.post('/api/v1/licenses/verify', {
        product_id: productId,
        license_blob: license.license_blob,
      });
      expect(old.body).toMatchObject({ valid: true, license: { entitlements: [] } });

      // Attaching what it holds already changes nothing and publishes nothing.
      const updatesBefore = recorder.of('license.updated', (e) => e.data.id === license.id).length;
      const again = await org.api.post(`/api/v1/licenses/${license.id}/entitlements`, { codes: [pdf.code] });
      expect(again.body.license_blob).toBe(attached.body.license_blob);

      const detached = await org.api.request('DELETE', `/api/v1/licenses/${license.id}/entitlements`, {
        codes: [sync.code],
      });
      expect(detached.status).toBe(200);
      expect(detached.body.entitlements).toEqual([pdf.code]);
      expect(decodeBlob(detached.body.license_blob).claims.entitlements).toEqual([pdf.code]);

      const events = await waitFor(
        () => {
          const updates = recorder.of('license.updated', (e) => e.data.id === license.id);
          return updates.length >= updatesBefore + 1 ? updates : undefined;
        },
        { what: 'license.updated for the detach' },
      );
      expect(events.map((e) => e.data.entitlements)).toEqual([sorted, [pdf.code]]);
      await waitFor(
        async () =>
          (
            await org.api.get(
              `/api/v1/audit-events?resource_type=license&resource_id=${license.id}&action=updated`,
            )
          ).body.total === 2,
        { what: 'the attach and detach audit entries' },
      );
      const audit = await org.api.get(
        `/api/v1/audit-events?resource_type=license&resource_id=${license.id}&action=updated`,
      );
      expect(audit.body.audit_events[0].changes.entitlements).toEqual({ from: sorted, to: [pdf.code] });
    });

    it('refuses unknown codes with 422 unknown_entitlement naming them, and changes nothing', async () => {
      const known = await newEntitlement();
      const theirs = (await other.api.post('/api/v1/entitlements', { code: uniqueCode('theirs'), name: 'T' }))
        .body;
      const license = await newLicense();
      for (const method of ['POST', 'DELETE']) {
        const response = await org.api.request(method, `/api/v1/licenses/${license.id}/entitlements`, {
          codes: [known.code, 'no-such-thing', theirs.code],
        });
        expect(problem(response)).toBe('422 unknown_entitlement');
        expect(response.body.detail).toContain('no-such-thing');
        expect(response.body.detail).toContain(theirs.code);
        expect(response.body.detail).not.toContain(known.code);
      }
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.entitlements).toEqual([]);
    });

    it('refuses malformed bodies with a 400 naming codes', async () => {
      const license = await newLicense();
      for (const body of [{}, { codes: [] }, { codes: 'pdf' }, { codes: ['Bad Code'] }, { codes: [1] }]) {
        const response = await org.api.post(`/api/v1/licenses/${license.id}/entitlements`, body);
        expect({ body, status: response.status, fields: fieldsOf(response) }).toEqual({
          body,
          status: 400,
          fields: ['codes'],
        });
      }
    });

    it('refuses to delete an entitlement a license holds (409), and allows it once detached', async () => {
      const entitlement = await newEntitlement();
      const license = await newLicense();
      await org.api.post(`/api/v1/licenses/${license.id}/entitlements`, { codes: [entitlement.code] });
      expect(problem(await org.api.delete(`/api/v1/entitlements/${entitlement.id}`))).toBe('409 conflict');
      await org.api.request('DELETE', `/api/v1/licenses/${license.id}/entitlements`, {
        codes: [entitlement.code],
      });
      expect((await org.api.delete(`/api/v1/entitlements/${entitlement.id}`)).status).toBe(200);
    });

    it('refuses to delete an entitlement a policy grants (409), and allows it once the policy drops it', async () => {
      const entitlement = await newEntitlement();
      const policy = await org.api.post('/api/v1/policies', {
        product_id: productId,
        name: 'Granting',
        entitlements: [entitlement.code],
      });
      expect(policy.status).toBe(201);
      const refused = await org.api.delete(`/api/v1/entitlements/${entitlement.id}`);
      expect(problem(refused)).toBe('409 conflict');
      expect(refused.body.detail).toContain('policies');
      await org.api.patch(`/api/v1/policies/${policy.body.id}`, { entitlements: [] });
      expect((await org.api.delete(`/api/v1/entitlements/${entitlement.id}`)).status).toBe(200);
    });

    it("answers another organization's license 404, and a revoked license 409", async () => {
      const entitlement = await newEntitlement();
      const license = await newLicense();
      const intrusion = await other.api.post(`/api/v1/licenses/${license.id}/entitlements`, {
        codes: [entitlement.code],
      });
      expect(problem(intrusion)).toBe('404 not_found');
      await org.api.delete(`/api/v1/licenses/${license.id}`);
      const revoked = await org.api.post(`/api/v1/licenses/${license.id}/entitlements`, {
        codes: [entitlement.code],
      });
      expect(problem(revoked)).toBe('409 conflict');
    });

    it('validate answers ENTITLEMENTS_MISSING after the machine checks, and VALID when every one is held', async () => {
      const [pdf, sso] = [await newEntitlement(), await newEntitlement()];
      const license = await newLicense({ max_seats: 2 });
      await org.api.post(`/api/v1/licenses/${license.id}/entitlements`, { codes: [pdf.code] });
      const validate = (body: Record<string, unknown>) =>
        org.api.post('/api/v1/licenses/validate', { key: license.serial, ...body });

      const held = await validate({ entitlements: [pdf.code] });
      expect(held.body).toMatchObject({ valid: true, code: 'VALID', license: { entitlements: [pdf.code] } });
      expect((await validate({ entitlements: [pdf.code, sso.code] })).body).toMatchObject({
        valid: false,
        code: 'ENTITLEMENTS_MISSING',
      });
      // The machine is checked first: no activation outranks a missing entitlement.
      expect((await validate({ fingerprint: 'm-1', entitlements: [sso.code] })).body.code).toBe(
        'NO_ACTIVATION',
      );
      await org.api.post('/api/v1/activations', { license_id: license.id, fingerprint: 'm-1' });
      expect((await validate({ fingerprint: 'm-1', entitlements: [sso.code] })).body.code).toBe(
        'ENTITLEMENTS_MISSING',
      );
      expect((await validate({ fingerprint: 'm-1' })).body.code).toBe('VALID');
      await org.api.patch(`/api/v1/licenses/${license.id}`, { status: 'suspended' });
      expect((await validate({ entitlements: [sso.code] })).body.code).toBe('SUSPENDED');
    });

    it('keeps entitlements when the license is patched or bound, and PATCH re-signs them into the file', async () => {
      const entitlement = await newEntitlement();
      const license = await newLicense();
      await org.api.post(`/api/v1/licenses/${license.id}/entitlements`, { codes: [entitlement.code] });
      const patched = await org.api.patch(`/api/v1/licenses/${license.id}`, { customer_id: 'cus_1' });
      expect(patched.body.entitlements).toEqual([entitlement.code]);
      expect(decodeBlob(patched.body.license_blob).claims.entitlements).toEqual([entitlement.code]);
      const audit = await waitFor(
        async () => {
          const entries = (
            await org.api.get(
              `/api/v1/audit-events?resource_type=license&resource_id=${license.id}&action=updated`,
            )
          ).body.audit_events as { changes: Record<string, unknown> }[];
          return entries.length === 2 ? entries : undefined;
        },
        { what: 'the PATCH audit entry' },
      );
      // The PATCH's entry says what the PATCH changed, not the entitlements it kept.
      expect(Object.keys(audit[0]!.changes)).toEqual(['customer_id']);
    });
  });

  describe('metered usage', () => {
    it('counts uses from 0, answers {uses, max_uses}, and refuses an increment that would pass max_uses', async () => {
      const license = await newLicense({ max_uses: 10 });
      expect(license).toMatchObject({ uses: 0, max_uses: 10 });
      const once = await usageOf(org.api, license.id);
      expect(once.status).toBe(200);
      expect(once.body).toEqual({ uses: 1, max_uses: 10 });
      expect((await usageOf(org.api, license.id, 9)).body).toEqual({ uses: 10, max_uses: 10 });
      const over = await usageOf(org.api, license.id, 1);
      expect(problem(over)).toBe('422 usage_limit_exceeded');
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body).toMatchObject({
        uses: 10,
        max_uses: 10,
      });

      // max_uses may be raised, lowered below uses (further increments are refused) or cleared.
      await org.api.patch(`/api/v1/licenses/${license.id}`, { max_uses: 5 });
      expect(problem(await usageOf(org.api, license.id, 1))).toBe('422 usage_limit_exceeded');
      const unlimited = await org.api.patch(`/api/v1/licenses/${license.id}`, { max_uses: null });
      expect(unlimited.body).toMatchObject({ uses: 10, max_uses: null });
      expect((await usageOf(org.api, license.id, 1_000_000)).body).toEqual({
        uses: 1_000_010,
        max_uses: null,
      });
    });

    it('refuses increments out of 1..1,000,000 and unknown fields with a 400 naming the field', async () => {
      const license = await newLicense();
      for (const increment of [0, -1, 1_000_001, 1.5, '1', null]) {
        const response = await usageOf(org.api, license.id, increment as number);
        expect({ increment, status: response.status, fields: fieldsOf(response) }).toEqual({
          increment,
          status: 400,
          fields: ['increment'],
        });
      }
      expect(problem(await org.api.post(`/api/v1/licenses/${license.id}/usage`, { by: 1 }))).toBe(
        '400 validation_failed',
      );
      for (const max_uses of [-1, 1.5, 'ten']) {
        const response = await org.api.post('/api/v1/licenses', { product_id: productId, max_uses });
        expect({ max_uses, status: response.status, fields: fieldsOf(response) }).toEqual({
          max_uses,
          status: 400,
          fields: ['max_uses'],
        });
      }
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.uses).toBe(0);
    });

    it('is exact under concurrency: 200 parallel increments of 1 against max_uses 50, exactly 50 succeed', async () => {
      const license = await newLicense({ max_uses: 50 });
      const { api: client } = await apiKeyWithScopes(org.api, ['client']);
      const answers = await Promise.all(Array.from({ length: 200 }, () => usageOf(client, license.id, 1)));
      const tally: Record<string, number> = {};
      for (const answer of answers) tally[problem(answer)] = (tally[problem(answer)] ?? 0) + 1;
      expect(tally).toEqual({ '200 undefined': 50, '422 usage_limit_exceeded': 150 });
      const totals = answers.filter((a) => a.status === 200).map((a) => a.body.uses as number);
      expect([...totals].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.uses).toBe(50);
      const [row] = await sql(`SELECT uses FROM license.licenses WHERE id = $1`, [license.id]);
      expect(Number(row.uses)).toBe(50);
      // One event per accepted increment, none for a refused one.
      await waitFor(
        () => recorder.of('license.usage_incremented', (e) => e.data.id === license.id).length === 50,
        { what: '50 usage events' },
      );
      const events = recorder.of('license.usage_incremented', (e) => e.data.id === license.id);
      expect(events.every((e) => e.data.increment === 1 && e.serial_status?.serial === license.serial)).toBe(
        true,
      );
      expect(new Set(events.map((e) => e.data.uses)).size).toBe(50);
    }, 60_000);

    it('answers 422 license_not_active for a suspended, expired or revoked license, and counts nothing', async () => {
      const suspended = await newLicense();
      await org.api.patch(`/api/v1/licenses/${suspended.id}`, { status: 'suspended' });
      const expired = await newLicense();
      // Past its valid_until, not yet swept: the effective status decides.
      await expireLicenseInDatabase(expired.id);
      const revoked = await newLicense();
      await org.api.delete(`/api/v1/licenses/${revoked.id}`);
      for (const license of [suspended, expired, revoked]) {
        expect(problem(await usageOf(org.api, license.id, 1))).toBe('422 license_not_active');
        expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.uses).toBe(0);
      }
    });

    it('resets to 0 with an admin key only; read and client keys get 403', async () => {
      const license = await newLicense({ max_uses: 3 });
      await usageOf(org.api, license.id, 3);
      const { api: read } = await apiKeyWithScopes(org.api, ['read']);
      const { api: client } = await apiKeyWithScopes(org.api, ['client']);
      expect(problem(await read.delete(`/api/v1/licenses/${license.id}/usage`))).toBe('403 forbidden');
      expect(problem(await client.delete(`/api/v1/licenses/${license.id}/usage`))).toBe('403 forbidden');
      expect(problem(await read.post(`/api/v1/licenses/${license.id}/usage`, { increment: 1 }))).toBe(
        '403 forbidden',
      );
      const reset = await org.api.delete(`/api/v1/licenses/${license.id}/usage`);
      expect(reset.status).toBe(200);
      expect(reset.body).toEqual({ uses: 0, max_uses: 3 });
      expect((await usageOf(client, license.id, 3)).body).toEqual({ uses: 3, max_uses: 3 });
      await recorder.waitFor('license.usage_reset', (e) => e.data.id === license.id && e.data.uses === 0);
      await waitFor(
        () =>
          receiver.received.some(
            (hook) => hook.body.type === 'license.usage_reset' && hook.body.data.id === license.id,
          ),
        { what: 'the reset delivered to the webhook' },
      );
      const audit = await waitFor(
        async () =>
          (
            await org.api.get(
              `/api/v1/audit-events?resource_type=license&resource_id=${license.id}&action=updated`,
            )
          ).body.audit_events[0],
        { what: 'the reset audit entry' },
      );
      expect(audit.changes).toEqual({ uses: { from: 3, to: 0 } });
    });

    it('lets a license token count its own license only: another license of the organization is 404', async () => {
      const own = await newLicense({ max_uses: 5 });
      const sibling = await newLicense({ max_uses: 5 });
      const token = await org.api.post(`/api/v1/licenses/${own.id}/tokens`, { name: 'app' });
      const app = org.api.withKey(token.body.token as string);
      expect((await usageOf(app, own.id, 2)).body).toEqual({ uses: 2, max_uses: 5 });
      expect(problem(await usageOf(app, sibling.id, 1))).toBe('404 not_found');
      expect(problem(await app.delete(`/api/v1/licenses/${own.id}/usage`))).toBe('403 forbidden');
      expect((await org.api.get(`/api/v1/licenses/${sibling.id}`)).body.uses).toBe(0);
      // Another organization's license is a 404 too, for its admin key.
      expect(problem(await usageOf(other.api, own.id, 1))).toBe('404 not_found');
      expect(problem(await other.api.delete(`/api/v1/licenses/${own.id}/usage`))).toBe('404 not_found');
      expect((await org.api.get(`/api/v1/licenses/${own.id}`)).body.uses).toBe(2);
    });

    it('closes usage to client keys when the organization says so, not to license tokens', async () => {
      const license = await createLicense(other.api, {
        product_id: (await productWithKeyPair(other.api)).product.id,
      });
      const { api: client } = await apiKeyWithScopes(other.api, ['client']);
      const token = await other.api.post(`/api/v1/licenses/${license.id}/tokens`, {});
      const app = other.api.withKey(token.body.token as string);
      await other.api.patch('/api/v1/organizations/current', { client_keys_license_actions: false });
      try {
        expect(problem(await usageOf(client, license.id, 1))).toBe('403 forbidden');
        expect((await usageOf(app, license.id, 1)).body).toEqual({ uses: 1, max_uses: null });
      } finally {
        await other.api.patch('/api/v1/organizations/current', { client_keys_license_actions: true });
      }
      await waitFor(async () => (await usageOf(client, license.id, 1)).status === 200, {
        what: 'client keys allowed again',
      });
    });

    it('counts an increment retried with the same Idempotency-Key once', async () => {
      const license = await newLicense();
      const headers = { 'idempotency-key': `usage-${license.id}` };
      const first = await org.api.post(`/api/v1/licenses/${license.id}/usage`, { increment: 4 }, headers);
      const again = await org.api.post(`/api/v1/licenses/${license.id}/usage`, { increment: 4 }, headers);
      expect(first.body).toEqual({ uses: 4, max_uses: null });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.uses).toBe(4);
    });

    it('publishes license.usage_incremented with the increment and the new total, to webhooks too', async () => {
      const license = await newLicense({ max_uses: 100 });
      await usageOf(org.api, license.id, 7);
      const event = await recorder.waitFor('license.usage_incremented', (e) => e.data.id === license.id);
      expect(event.data).toMatchObject({
        id: license.id,
        serial: license.serial,
        increment: 7,
        uses: 7,
        max_uses: 100,
      });
      expect(event.data).not.toHaveProperty('license_blob');
      const hook = await waitFor(
        () =>
          receiver.received.find(
            (h) => h.body.type === 'license.usage_incremented' && h.body.data.id === license.id,
          ),
        { what: 'the increment delivered to the webhook' },
      );
      expect(hook.body.data).toMatchObject({ increment: 7, uses: 7 });
    });

    it('is counted by analytics exactly once per increment, even when an event is delivered again', async () => {
      const license = await newLicense();
      const meteredOf = async () => {
        const { body } = await org.api.get(`/api/v1/licenses/${license.id}/usage`);
        return { increments: body.increments, uses_counted: body.uses_counted };
      };
      expect(await meteredOf()).toEqual({ increments: 0, uses_counted: 0 });
      await usageOf(org.api, license.id, 3);
      await usageOf(org.api, license.id, 4);
      await waitFor(async () => (await meteredOf()).increments === 2, { what: 'two increments counted' });
      expect(await meteredOf()).toEqual({ increments: 2, uses_counted: 7 });

      // The same event published again under another message id (past JetStream's de-duplication
      // window, say): the analytics service stores it by its event id, so it counts nothing.
      const {
        subject,
        messageId: _messageId,
        ...event
      } = await recorder.waitFor(
        'license.usage_incremented',
        (e) => e.data.id === license.id && e.data.increment === 3,
      );
      const nats = await connect({ servers: TEST_NATS_URL });
      try {
        await nats.jetstream().publish(subject, JSON.stringify(event), { msgID: randomUUID() });
      } finally {
        await nats.drain();
      }
      // A marker increment after it: once the marker is counted, the duplicate was handled before it.
      await usageOf(org.api, license.id, 1);
      await waitFor(async () => (await meteredOf()).uses_counted >= 8, { what: 'the marker counted' });
      expect(await meteredOf()).toEqual({ increments: 3, uses_counted: 8 });
      const { body } = await org.api.get(`/api/v1/licenses/${license.id}/usage`);
      expect(body).toMatchObject({ syncs: 0, last_increment_at: expect.any(String) });
    });

    it("writes down a past period's reset: uses 0 and license.usage_reset without an increment", async () => {
      const policy = await org.api.post('/api/v1/policies', {
        product_id: productId,
        name: 'Weekly',
        max_uses: 10,
        uses_reset: 'week',
      });
      expect(policy.status).toBe(201);
      const license = await newLicense({ policy_id: policy.body.id });
      const current = await newLicense({ policy_id: policy.body.id });
      for (const { id } of [license, current]) await usageOf(org.api, id, 4);
      // The first count began before this ISO week; the second in it.
      await sql(`UPDATE license.licenses SET uses_period_start = now() - interval '8 days' WHERE id = $1`, [
        license.id,
      ]);
      const reset = await recorder.waitFor('license.usage_reset', (e) => e.data.id === license.id, 15_000);
      expect(reset.data).toMatchObject({ uses: 0, max_uses: 10 });
      expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.uses).toBe(0);
      await waitFor(
        () =>
          receiver.received.some(
            (hook) => hook.body.type === 'license.usage_reset' && hook.body.data.id === license.id,
          ),
        { what: 'the periodic reset delivered to the webhook' },
      );
      // The reset counts from now: the next increment adds to 0, once.
      expect((await usageOf(org.api, license.id, 1)).body).toEqual({ uses: 1, max_uses: 10 });
      expect((await org.api.get(`/api/v1/licenses/${current.id}`)).body.uses).toBe(4);
      expect(recorder.of('license.usage_reset', (e) => e.data.id === current.id)).toEqual([]);
    });
  });
});
