import { createHash, randomUUID } from 'node:crypto';
import { ApiClient, waitFor } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, uniqueCode } from './support/fixtures';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A request id of its own for every request, so that each entry can be traced to its request. */
const rid = (label: string): { 'x-request-id': string } => ({ 'x-request-id': `${label}-${randomUUID()}` });

/** Every audit event of the organization, newest first, through the paginated API. */
async function allEntries(api: ApiClient, filter = ''): Promise<any[]> {
  const entries: any[] = [];
  for (let page = 1; ; page++) {
    const response = await api.get(`/api/v1/audit-events?per_page=100&page=${page}${filter}`);
    expect(response.status).toBe(200);
    entries.push(...response.body.audit_events);
    if (entries.length >= response.body.total || response.body.audit_events.length === 0) return entries;
  }
}

/** The audit log: every change made with an API key, whoever's service made it. */
describe('audit log', () => {
  let stack: TestStack;
  let org: TestOrganization;
  /** An admin key with a name of its own, which makes the changes under test. */
  let admin: { key: any; api: ApiClient };

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
    admin = await apiKeyWithScopes(org.api, ['admin'], 'audit admin');
  });
  afterAll(async () => {
    await stack.close();
  });

  /**
   * Entries made by the services arrive through a stream, in the order each service recorded them:
   * once an entry recorded after everything else in both services has been stored, every earlier
   * one has too, and counting is exact.
   */
  async function settle(): Promise<void> {
    const keyPair = await admin.api.post('/api/v1/key-pairs', { name: 'marker' });
    const product = await admin.api.post('/api/v1/products', { name: 'marker', code: uniqueCode('marker') });
    for (const id of [keyPair.body.id, product.body.id]) {
      await waitFor(
        async () => (await admin.api.get(`/api/v1/audit-events?resource_id=${id}`)).body.total === 1,
        { what: `the audit entry of marker ${id}` },
      );
    }
  }

  const byRequest = (entries: any[], headers: { 'x-request-id': string }) =>
    entries.filter((entry) => entry.request_id === headers['x-request-id']);

  it('records every kind of change exactly once, with its action, resource, actor, request id and address', async () => {
    const client = await apiKeyWithScopes(admin.api, ['client'], 'shipped app');
    const r = {
      keyPair: rid('key-pair-create'),
      product: rid('product-create'),
      productUpdate: rid('product-update'),
      license: rid('license-create'),
      suspendAndEdit: rid('license-suspend-edit'),
      reinstate: rid('license-reinstate'),
      activate: rid('activation-create'),
      heartbeat: rid('activation-heartbeat'),
      deactivate: rid('activation-delete'),
      revoke: rid('license-revoke'),
      revokeAgain: rid('license-revoke-again'),
      spare: rid('key-pair-spare'),
      spareDelete: rid('key-pair-delete'),
      doomed: rid('product-doomed'),
      doomedDelete: rid('product-delete'),
      apiKeyRevoke: rid('api-key-revoke'),
    };

    const keyPair = (await admin.api.post('/api/v1/key-pairs', { name: 'signing' }, r.keyPair)).body;
    const code = uniqueCode();
    const product = (
      await admin.api.post(
        '/api/v1/products',
        { name: 'Editor', code, key_pair_id: keyPair.id, activation_heartbeat_interval: 3600 },
        r.product,
      )
    ).body;
    expect(
      (await admin.api.put(`/api/v1/products/${product.id}`, { name: 'Editor Pro' }, r.productUpdate)).status,
    ).toBe(200);
    const license = (
      await admin.api.post(
        '/api/v1/licenses',
        { product_id: product.id, customer_email: 'ada@example.com', max_seats: 2 },
        r.license,
      )
    ).body;
    expect(
      (
        await admin.api.patch(
          `/api/v1/licenses/${license.id}`,
          { status: 'suspended', customer_email: 'grace@example.com', features: ['pro'] },
          r.suspendAndEdit,
        )
      ).status,
    ).toBe(200);
    expect(
      (await admin.api.patch(`/api/v1/licenses/${license.id}`, { status: 'active' }, r.reinstate)).status,
    ).toBe(200);
    const activation = await client.api.post(
      '/v1/activations',
      { license_id: license.id, fingerprint: 'machine-1' },
      r.activate,
    );
    expect(activation.status).toBe(201);
    expect(
      (await client.api.post(`/v1/activations/${activation.body.id}/heartbeat`, undefined, r.heartbeat))
        .status,
    ).toBe(200);
    expect((await client.api.delete(`/v1/activations/${activation.body.id}`, r.deactivate)).status).toBe(200);
    expect((await admin.api.delete(`/api/v1/licenses/${license.id}`, r.revoke)).status).toBe(200);
    expect((await admin.api.delete(`/api/v1/licenses/${license.id}`, r.revokeAgain)).status).toBe(200);
    const spare = (await admin.api.post('/api/v1/key-pairs', { name: 'spare' }, r.spare)).body;
    expect((await admin.api.delete(`/api/v1/key-pairs/${spare.id}`, r.spareDelete)).status).toBe(200);
    const doomed = (
      await admin.api.post('/api/v1/products', { name: 'Doomed', code: uniqueCode() }, r.doomed)
    ).body;
    expect((await admin.api.delete(`/api/v1/products/${doomed.id}`, r.doomedDelete)).status).toBe(200);
    expect((await admin.api.delete(`/api/v1/api-keys/${client.key.id}`, r.apiKeyRevoke)).status).toBe(200);
    await settle();

    const entries = await allEntries(admin.api);
    const adminActor = { api_key_id: admin.key.id, prefix: admin.key.prefix, name: 'audit admin' };
    const clientActor = { api_key_id: client.key.id, prefix: client.key.prefix, name: 'shipped app' };
    /** The one entry the request made, with what every entry must hold. */
    const only = (headers: { 'x-request-id': string }, actor = adminActor) => {
      const found = byRequest(entries, headers);
      expect(found).toHaveLength(1);
      const [entry] = found;
      expect(entry).toEqual({
        id: expect.any(String),
        occurred_at: expect.stringMatching(ISO_MS),
        action: expect.any(String),
        resource_type: expect.any(String),
        resource_id: expect.any(String),
        actor,
        request_id: headers['x-request-id'],
        ip: '127.0.0.1',
        changes: expect.any(Object),
      });
      return entry;
    };

    expect(only(r.keyPair)).toMatchObject({
      action: 'created',
      resource_type: 'key_pair',
      resource_id: keyPair.id,
      changes: { name: { from: null, to: 'signing' }, algorithm: { from: null, to: 'ed25519' } },
    });
    expect(only(r.product)).toMatchObject({
      action: 'created',
      resource_type: 'product',
      resource_id: product.id,
      changes: { code: { from: null, to: code }, key_pair_id: { from: null, to: keyPair.id } },
    });
    // An update lists exactly the fields that changed.
    expect(only(r.productUpdate)).toMatchObject({
      action: 'updated',
      resource_type: 'product',
      resource_id: product.id,
    });
    expect(only(r.productUpdate).changes).toEqual({ name: { from: 'Editor', to: 'Editor Pro' } });
    expect(only(r.license)).toMatchObject({
      action: 'created',
      resource_type: 'license',
      resource_id: license.id,
      changes: { serial: { from: null, to: license.serial }, max_seats: { from: null, to: 2 } },
    });

    // A PATCH that suspends and edits fields is two changes: one entry each.
    const both = byRequest(entries, r.suspendAndEdit);
    expect(both.map((e) => e.action).sort()).toEqual(['suspended', 'updated']);
    expect(both.every((e) => e.resource_id === license.id && e.resource_type === 'license')).toBe(true);
    expect(both.find((e) => e.action === 'suspended').changes).toEqual({
      status: { from: 'active', to: 'suspended' },
    });
    expect(both.find((e) => e.action === 'updated').changes).toEqual({
      customer_email: { from: 'ada@example.com', to: 'grace@example.com' },
      features: { from: [], to: ['pro'] },
    });
    expect(only(r.reinstate)).toMatchObject({
      action: 'reinstated',
      resource_id: license.id,
      changes: { status: { from: 'suspended', to: 'active' } },
    });

    // Activations are made by the client key, and named after it.
    expect(only(r.activate, clientActor)).toMatchObject({
      action: 'created',
      resource_type: 'activation',
      resource_id: activation.body.id,
      changes: { license_id: { from: null, to: license.id }, fingerprint: { from: null, to: 'machine-1' } },
    });
    expect(byRequest(entries, r.heartbeat)).toEqual([]); // a heartbeat is not a change
    expect(only(r.deactivate, clientActor)).toMatchObject({
      action: 'deleted',
      resource_type: 'activation',
      resource_id: activation.body.id,
      changes: { fingerprint: { from: 'machine-1', to: null } },
    });

    const revoked = only(r.revoke);
    expect(revoked).toMatchObject({ action: 'revoked', resource_type: 'license', resource_id: license.id });
    expect(revoked.changes.status).toEqual({ from: 'active', to: 'revoked' });
    expect(revoked.changes.revoked_at).toEqual({ from: null, to: expect.stringMatching(ISO_MS) });
    expect(byRequest(entries, r.revokeAgain)).toEqual([]); // revoking again changes nothing

    expect(only(r.spareDelete)).toMatchObject({
      action: 'deleted',
      resource_type: 'key_pair',
      resource_id: spare.id,
      changes: { name: { from: 'spare', to: null } },
    });
    expect(only(r.doomedDelete)).toMatchObject({
      action: 'deleted',
      resource_type: 'product',
      resource_id: doomed.id,
      changes: { name: { from: 'Doomed', to: null } },
    });

    // API keys are the gateway's own: created by the admin key that made them, revoked likewise.
    const keyCreated = entries.filter(
      (e) => e.resource_type === 'api_key' && e.resource_id === client.key.id,
    );
    expect(keyCreated.map((e) => e.action).sort()).toEqual(['created', 'revoked']);
    expect(keyCreated.find((e) => e.action === 'created')).toMatchObject({
      actor: adminActor,
      changes: { name: { from: null, to: 'shipped app' }, scopes: { from: null, to: ['client'] } },
    });
    expect(only(r.apiKeyRevoke)).toMatchObject({
      action: 'revoked',
      resource_type: 'api_key',
      resource_id: client.key.id,
      changes: { revoked_at: { from: null, to: expect.stringMatching(ISO_MS) } },
    });
    // The admin key itself was created by the organization's first key.
    expect(
      entries.find((e) => e.resource_type === 'api_key' && e.resource_id === admin.key.id),
    ).toMatchObject({ action: 'created', actor: { name: 'admin (bootstrap)' } });

    // Newest first, ties broken by id descending.
    const order = entries.map((e) => [e.occurred_at, e.id].join(' '));
    expect(order).toEqual([...order].sort().reverse());
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
  });

  it('never holds secrets or key material', async () => {
    const secretKey = await apiKeyWithScopes(admin.api, ['read'], 'secret holder');
    const { product } = await (async () => {
      const keyPair = (await admin.api.post('/api/v1/key-pairs', { algorithm: 'ecdsa-p256' })).body;
      const created = await admin.api.post('/api/v1/products', {
        name: 'Secretive',
        code: uniqueCode(),
        key_pair_id: keyPair.id,
      });
      return { product: created.body };
    })();
    const license = (await admin.api.post('/api/v1/licenses', { product_id: product.id })).body;
    const patched = (await admin.api.patch(`/api/v1/licenses/${license.id}`, { max_seats: 3 })).body;
    await admin.api.delete(`/api/v1/api-keys/${secretKey.key.id}`);
    await settle();

    const text = JSON.stringify(await allEntries(admin.api));
    for (const key of [org.adminKey, admin.key.key, secretKey.key.key]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(createHash('sha256').update(key).digest('hex'));
    }
    expect(text).not.toMatch(/lk_[A-Za-z0-9_-]{43}/);
    expect(text).not.toContain('license_blob');
    expect(text).not.toContain(license.license_blob);
    expect(text).not.toContain(patched.license_blob);
    expect(text).not.toContain('PRIVATE KEY');
    expect(text).not.toMatch(/key_hash|private_key|"secret"/);
  });

  it('leaves no entry for a change that was rejected or rolled back', async () => {
    const keyPair = (await admin.api.post('/api/v1/key-pairs', {})).body;
    const kept = (
      await admin.api.post('/api/v1/products', { name: 'Kept', code: uniqueCode(), key_pair_id: keyPair.id })
    ).body;
    const license = (await admin.api.post('/api/v1/licenses', { product_id: kept.id })).body;
    await admin.api.delete(`/api/v1/licenses/${license.id}`);
    const r = {
      invalid: rid('invalid'),
      unknownKeyPair: rid('unknown-key-pair'),
      duplicate: rid('duplicate-code'),
      productWithLicenses: rid('product-with-licenses'),
      keyPairInUse: rid('key-pair-in-use'),
      revokedPatch: rid('patch-revoked'),
      unknownLicense: rid('unknown-license'),
      unknownApiKey: rid('unknown-api-key'),
      badApiKey: rid('bad-api-key'),
    };
    const statuses = [
      (await admin.api.post('/api/v1/products', { name: 'No code' }, r.invalid)).status,
      // The product row is inserted, then the license service refuses the key pair: all rolls back.
      (
        await admin.api.post(
          '/api/v1/products',
          { name: 'Nope', code: uniqueCode(), key_pair_id: '00000000-0000-4000-8000-000000000000' },
          r.unknownKeyPair,
        )
      ).status,
      (await admin.api.post('/api/v1/products', { name: 'Twice', code: kept.code }, r.duplicate)).status,
      (await admin.api.delete(`/api/v1/products/${kept.id}`, r.productWithLicenses)).status,
      (await admin.api.delete(`/api/v1/key-pairs/${keyPair.id}`, r.keyPairInUse)).status,
      (await admin.api.patch(`/api/v1/licenses/${license.id}`, { max_seats: 5 }, r.revokedPatch)).status,
      (await admin.api.delete(`/api/v1/licenses/${randomUUID()}`, r.unknownLicense)).status,
      (await admin.api.delete(`/api/v1/api-keys/${randomUUID()}`, r.unknownApiKey)).status,
      (await admin.api.post('/api/v1/api-keys', { name: 'x', scopes: ['root'] }, r.badApiKey)).status,
    ];
    expect(statuses).toEqual([400, 404, 409, 409, 409, 409, 404, 404, 400]);
    await settle();

    const entries = await allEntries(admin.api);
    for (const headers of Object.values(r)) expect(byRequest(entries, headers)).toEqual([]);
    expect(entries.filter((e) => e.resource_id === kept.id).map((e) => e.action)).toEqual(['created']);
  });

  it('shows an organization only its own entries, whatever the filter names', async () => {
    const product = (await admin.api.post('/api/v1/products', { name: 'Ours', code: uniqueCode() })).body;
    await waitFor(
      async () => (await admin.api.get(`/api/v1/audit-events?resource_id=${product.id}`)).body.total === 1,
      { what: 'the product entry' },
    );
    const other = await stack.newOrganization();
    expect((await other.api.get('/api/v1/audit-events')).body).toEqual({ audit_events: [], total: 0 });
    expect((await other.api.get(`/api/v1/audit-events?resource_id=${product.id}`)).body).toEqual({
      audit_events: [],
      total: 0,
    });
    expect((await other.api.get(`/api/v1/audit-events?api_key_id=${admin.key.id}`)).body.total).toBe(0);

    // Their own changes are theirs alone.
    const theirs = (await other.api.post('/api/v1/products', { name: 'Theirs', code: uniqueCode() })).body;
    const entry = await waitFor(
      async () => (await other.api.get(`/api/v1/audit-events?resource_id=${theirs.id}`)).body.audit_events[0],
      { what: "the other organization's entry" },
    );
    expect(entry).toMatchObject({ action: 'created', resource_type: 'product' });
    expect((await admin.api.get(`/api/v1/audit-events?resource_id=${theirs.id}`)).body.total).toBe(0);
  });

  it('filters by resource, action, key and time, and pages newest first', async () => {
    const writer = await apiKeyWithScopes(admin.api, ['admin'], 'filter writer');
    const product = (await writer.api.post('/api/v1/products', { name: 'v0', code: uniqueCode() })).body;
    for (const name of ['v1', 'v2', 'v3']) {
      expect((await writer.api.put(`/api/v1/products/${product.id}`, { name })).status).toBe(200);
    }
    const history = await waitFor(
      async () => {
        const body = (await admin.api.get(`/api/v1/audit-events?resource_id=${product.id}`)).body;
        return body.total === 4 && body;
      },
      { what: "the product's four entries" },
    );
    expect(history.audit_events.map((e: any) => e.action)).toEqual([
      'updated',
      'updated',
      'updated',
      'created',
    ]);
    expect(history.audit_events.map((e: any) => e.changes.name.to)).toEqual(['v3', 'v2', 'v1', 'v0']);

    const query = async (params: string) => {
      const response = await admin.api.get(`/api/v1/audit-events?${params}`);
      expect(response.status).toBe(200);
      return response.body;
    };
    const ofProduct = `resource_id=${product.id}`;
    expect((await query(`${ofProduct}&action=updated`)).total).toBe(3);
    expect((await query(`${ofProduct}&action=created&resource_type=product`)).total).toBe(1);
    expect((await query(`${ofProduct}&resource_type=license`)).total).toBe(0);
    const byWriter = await query(`api_key_id=${writer.key.id}`);
    expect(byWriter.total).toBe(4);
    expect(byWriter.audit_events.every((e: any) => e.actor.api_key_id === writer.key.id)).toBe(true);

    // Pages: newest first, `total` counts every match.
    const first = await query(`${ofProduct}&per_page=3&page=1`);
    const second = await query(`${ofProduct}&per_page=3&page=2`);
    expect(first.total).toBe(4);
    expect([...first.audit_events, ...second.audit_events]).toEqual(history.audit_events);
    expect((await query(`${ofProduct}&per_page=3&page=3`)).audit_events).toEqual([]);

    // `from` inclusive, `to` exclusive, on occurred_at.
    const [newest, , , oldest] = history.audit_events;
    expect((await query(`${ofProduct}&from=${newest.occurred_at}`)).audit_events[0].id).toBe(newest.id);
    expect((await query(`${ofProduct}&to=${oldest.occurred_at}`)).total).toBe(0);
    const window = await query(`${ofProduct}&from=${oldest.occurred_at}&to=${newest.occurred_at}`);
    expect(window.audit_events.map((e: any) => e.id)).not.toContain(newest.id);
    expect(window.audit_events.map((e: any) => e.id)).toContain(oldest.id);

    // The same log under /v1.
    expect((await admin.api.get(`/v1/audit-events?${ofProduct}`)).body).toEqual(history);
  });

  it.each([
    'per_page=0',
    'per_page=101',
    'page=0',
    'from=yesterday',
    'to=2026-13-40T00:00:00Z',
    'resource_id=not-a-uuid',
    'api_key_id=123',
    'action=exploded',
    'resource_type=planet',
    'colour=blue',
  ])('answers 400 to %s', async (params) => {
    const response = await admin.api.get(`/api/v1/audit-events?${params}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('validation_failed');
  });

  it('is for admin keys only', async () => {
    const read = await apiKeyWithScopes(admin.api, ['read']);
    const client = await apiKeyWithScopes(admin.api, ['client']);
    expect((await read.api.get('/api/v1/audit-events')).status).toBe(403);
    expect((await client.api.get('/v1/audit-events')).status).toBe(403);
    expect((await stack.anonymous.get('/api/v1/audit-events')).status).toBe(401);
  });
});

/** Behind an ingress (TRUST_PROXY=true) the address is the client's, from X-Forwarded-For. */
describe('audit log behind a proxy', () => {
  let stack: TestStack;
  let org: TestOrganization;

  beforeAll(async () => {
    stack = await startStack({ env: { TRUST_PROXY: 'true' } });
    org = await stack.newOrganization();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('records the forwarded client address, and none when the header holds no address', async () => {
    const forwarded = await org.api.post(
      '/api/v1/api-keys',
      { name: 'forwarded', scopes: ['read'] },
      { 'x-forwarded-for': '203.0.113.7' },
    );
    const garbled = await org.api.post(
      '/api/v1/api-keys',
      { name: 'garbled', scopes: ['read'] },
      { 'x-forwarded-for': 'not-an-address' },
    );
    const ipOf = async (id: string) =>
      (await org.api.get(`/api/v1/audit-events?resource_id=${id}`)).body.audit_events[0].ip;
    expect(await ipOf(forwarded.body.id)).toBe('203.0.113.7');
    expect(await ipOf(garbled.body.id)).toBeNull();
  });
});
