import { EventRecorder } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { createLicense, productWithKeyPair, sql } from './support/fixtures';

const claimsOf = (blob: string) =>
  JSON.parse(Buffer.from(Buffer.from(blob, 'base64').toString().split('.')[1], 'base64url').toString());

describe('PATCH /licenses/:id and expiry', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let recorder: EventRecorder;
  let product: any;

  beforeAll(async () => {
    stack = await startStack();
    recorder = await EventRecorder.start(stack.namespace);
    org = await stack.newOrganization();
    ({ product } = await productWithKeyPair(org.api));
  });
  afterAll(async () => {
    await recorder.stop();
    await stack.close();
  });

  const check = async (serial: string) =>
    (await org.api.post('/v1/licenses/check-revocation', { serials: [serial] })).body.results[0].status;
  const sync = async (serial: string) =>
    (await org.api.post('/v1/licenses/sync', { license_serial: serial })).body.status;

  it('changes only the given fields and answers a freshly signed license_blob that verifies', async () => {
    const license = await createLicense(org.api, {
      product_id: product.id,
      customer_id: 'cust-1',
      customer_email: 'old@example.com',
      features: ['basic'],
    });
    const patched = await org.api.patch(`/v1/licenses/${license.id}`, {
      customer_email: 'new@example.com',
      features: ['basic', 'pro'],
      max_seats: 4,
      hardware_binding: { fingerprint: 'hw-1' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      customer_id: 'cust-1',
      customer_email: 'new@example.com',
      features: ['basic', 'pro'],
      max_seats: 4,
      hardware_binding: { fingerprint: 'hw-1' },
      status: 'active',
      serial: license.serial,
      valid_until: license.valid_until,
    });
    expect(patched.body.license_blob).not.toBe(license.license_blob);
    expect(claimsOf(patched.body.license_blob)).toMatchObject({
      customer_email: 'new@example.com',
      features: ['basic', 'pro'],
      max_seats: 4,
      hardware_binding: { fingerprint: 'hw-1' },
    });
    const verified = await org.api.post('/v1/licenses/verify', {
      license_blob: patched.body.license_blob,
      product_id: product.id,
    });
    expect(verified.body).toMatchObject({ valid: true, errors: [] });
    expect((await org.api.get(`/v1/licenses/${license.id}`)).body.license_blob).toBe(
      patched.body.license_blob,
    );
    const updated = await recorder.waitFor('license.updated', (e) => e.data.id === license.id);
    expect(updated.data.max_seats).toBe(4);
  });

  it('clears customer_id, customer_email and hardware_binding with null, and makes valid_until perpetual', async () => {
    const license = await createLicense(org.api, {
      product_id: product.id,
      customer_id: 'c',
      customer_email: 'a@example.com',
      hardware_binding: { fingerprint: 'f' },
    });
    const patched = await org.api.patch(`/api/v1/licenses/${license.id}`, {
      customer_id: null,
      customer_email: null,
      hardware_binding: null,
      valid_until: null,
    });
    expect(patched.body).toMatchObject({
      customer_id: null,
      customer_email: null,
      hardware_binding: null,
      valid_until: null,
    });
    expect(claimsOf(patched.body.license_blob).exp).toBeUndefined();
  });

  it('suspends and reinstates: check-revocation, sync and verify follow at once, with events', async () => {
    const license = await createLicense(org.api, { product_id: product.id });
    expect(await check(license.serial)).toBe('active'); // warms the cache
    const suspended = await org.api.patch(`/v1/licenses/${license.id}`, { status: 'suspended' });
    expect(suspended.body.status).toBe('suspended');
    expect(await check(license.serial)).toBe('suspended');
    expect(await sync(license.serial)).toBe('suspended');
    const verified = await org.api.post('/v1/licenses/verify', {
      license_blob: license.license_blob,
      product_id: product.id,
    });
    expect(verified.body.errors.map((e: any) => e.code)).toEqual(['suspended']);

    const reinstated = await org.api.patch(`/v1/licenses/${license.id}`, { status: 'active' });
    expect(reinstated.body.status).toBe('active');
    expect(await check(license.serial)).toBe('active');
    expect(await sync(license.serial)).toBe('ok');
    await recorder.waitFor('license.suspended', (e) => e.data.id === license.id);
    await recorder.waitFor('license.reinstated', (e) => e.data.id === license.id);
    expect(recorder.of('license.updated', (e) => e.data.id === license.id)).toEqual([]);
  });

  it('answers 409 for a revoked license, whatever the change', async () => {
    const license = await createLicense(org.api, { product_id: product.id });
    await org.api.delete(`/v1/licenses/${license.id}`);
    for (const change of [{ status: 'active' }, { features: ['x'] }, { customer_id: null }]) {
      const answer = await org.api.patch(`/v1/licenses/${license.id}`, change);
      expect(answer.status).toBe(409);
      expect(answer.body.code).toBe('conflict');
    }
  });

  it.each([
    [{ status: 'revoked' }, 'status'],
    [{ status: 'expired' }, 'status'],
    [{ valid_until: 'tomorrow' }, 'valid_until'],
    [{ max_seats: 0 }, 'max_seats'],
    [{ customer_email: 'not-an-email' }, 'customer_email'],
    [{ features: null }, 'features'],
    [{ serial: 'LIC-X-0000000000000000' }, 'serial'],
    [{ product_id: '00000000-0000-4000-8000-000000000000' }, 'product_id'],
  ])('rejects %j with 400 naming %s', async (change, field) => {
    const license = await createLicense(org.api, { product_id: product.id });
    const answer = await org.api.patch(`/v1/licenses/${license.id}`, change);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('validation_failed');
    expect(answer.body.errors.map((e: any) => e.field)).toContain(field);
  });

  it('refuses valid_until before valid_from, and more than one seat for a node-locked license', async () => {
    const license = await createLicense(org.api, { product_id: product.id, license_type: 'node_locked' });
    const early = new Date(Date.parse(license.valid_from) - 1).toISOString();
    expect(
      (await org.api.patch(`/v1/licenses/${license.id}`, { valid_until: early })).body.errors[0].field,
    ).toBe('valid_until');
    expect((await org.api.patch(`/v1/licenses/${license.id}`, { max_seats: 2 })).status).toBe(400);
  });

  it("answers 404 for another organization's license and 400 for a malformed id", async () => {
    const other = await stack.newOrganization();
    const theirs = await createLicense(other.api, {
      product_id: (await productWithKeyPair(other.api)).product.id,
    });
    expect((await org.api.patch(`/v1/licenses/${theirs.id}`, { features: [] })).status).toBe(404);
    expect((await org.api.patch('/v1/licenses/nope', { features: [] })).status).toBe(400);
    expect((await other.api.get(`/v1/licenses/${theirs.id}`)).body.features).toEqual(theirs.features);
  });

  it('reports an overdue license as expired everywhere before the sweep has stored it, and active again once extended', async () => {
    const license = await createLicense(org.api, { product_id: product.id });
    expect(await check(license.serial)).toBe('active');
    const ended = await org.api.patch(`/v1/licenses/${license.id}`, { valid_until: license.valid_from });
    expect(ended.body.status).toBe('expired');
    const [stored] = await sql('SELECT status FROM license.licenses WHERE id = $1', [license.id]);
    expect(stored.status).toBe('active'); // the sweep (every 30 s by default) has not run
    expect((await org.api.get(`/v1/licenses/${license.id}`)).body.status).toBe('expired');
    const listed = await org.api.get(`/v1/licenses?status=expired&product_id=${product.id}`);
    expect(listed.body.licenses.map((l: any) => l.id)).toContain(license.id);
    expect(await check(license.serial)).toBe('expired');
    expect(await sync(license.serial)).toBe('expired');
    const verified = await org.api.post('/v1/licenses/verify', {
      license_blob: ended.body.license_blob,
      product_id: product.id,
    });
    expect(verified.body.errors.map((e: any) => e.code)).toEqual(['expired']);

    const future = new Date(Date.now() + 86_400_000).toISOString();
    const extended = await org.api.patch(`/v1/licenses/${license.id}`, { valid_until: future });
    expect(extended.body.status).toBe('active');
    expect(await check(license.serial)).toBe('active');
    expect(await sync(license.serial)).toBe('ok');
  });
});
