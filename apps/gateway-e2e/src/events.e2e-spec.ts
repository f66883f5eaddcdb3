import { EventRecorder } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { createLicense, uniqueCode } from './support/fixtures';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** What an internal subscriber of LICENSING_EVENTS sees (docs/events.md). */
describe('events', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let recorder: EventRecorder;

  beforeAll(async () => {
    stack = await startStack();
    recorder = await EventRecorder.start(stack.namespace);
    org = await stack.newOrganization();
  });
  afterAll(async () => {
    await recorder.stop();
    await stack.close();
  });

  /**
   * Each service publishes its outbox in order, so once an event recorded after everything else
   * in both services has arrived, every earlier event has too: then counting them is exact.
   */
  async function settle(): Promise<void> {
    const keyPair = await org.api.post('/api/v1/key-pairs', { name: 'marker' });
    const product = await org.api.post('/api/v1/products', { name: 'marker', code: uniqueCode('marker') });
    await recorder.waitFor('key_pair.created', (e) => e.data.id === keyPair.body.id);
    await recorder.waitFor('product.created', (e) => e.data.id === product.body.id);
  }

  it('publishes every change of key pairs, products and licenses exactly once, with the documented payload', async () => {
    const keyPair = (await org.api.post('/api/v1/key-pairs', { name: 'signing' })).body;
    const product = (
      await org.api.post('/api/v1/products', { name: 'Editor', code: uniqueCode(), key_pair_id: keyPair.id })
    ).body;
    const updated = (await org.api.put(`/api/v1/products/${product.id}`, { name: 'Editor Pro' })).body;
    const license = await createLicense(org.api, {
      product_id: product.id,
      customer_email: 'ada@example.com',
    });
    expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
    expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200); // no second event
    const spare = (await org.api.post('/api/v1/key-pairs', { name: 'spare' })).body;
    expect((await org.api.delete(`/api/v1/key-pairs/${spare.id}`)).status).toBe(200);
    const doomed = (await org.api.post('/api/v1/products', { name: 'Doomed', code: uniqueCode() })).body;
    expect((await org.api.delete(`/api/v1/products/${doomed.id}`)).status).toBe(200);
    await settle();

    const one = (type: string, id: string) => {
      const found = recorder.of(type, (e) => e.data.id === id);
      expect(found).toHaveLength(1);
      const [event] = found;
      expect(event.org_id).toBe(org.id);
      expect(event.schema_version).toBe(1);
      expect(event.occurred_at).toMatch(ISO_MS);
      expect(event.subject).toBe(`${stack.namespace}.licensing.events.${org.id}.${type}`);
      expect(event.messageId).toBe(event.id);
      return event;
    };

    expect(one('key_pair.created', keyPair.id).data).toEqual(keyPair);
    expect(one('product.created', product.id).data).toEqual(product);
    expect(one('product.updated', product.id).data).toEqual(updated);
    const { license_blob: _blob, ...listed } = license;
    expect(one('license.created', license.id).data).toEqual(listed);
    const revoked = one('license.revoked', license.id);
    expect(revoked.data).toMatchObject({ id: license.id, serial: license.serial, status: 'revoked' });
    expect(revoked.data.license_blob).toBeUndefined();
    expect(revoked.occurred_at).toBe(revoked.data.revoked_at);
    expect(one('key_pair.deleted', spare.id).data).toEqual(spare);
    expect(one('product.deleted', doomed.id).data).toMatchObject({ id: doomed.id, code: doomed.code });

    const ids = recorder.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('publishes nothing for a change that rolled back', async () => {
    const code = uniqueCode('rolled-back');
    // The license service refuses the key pair, so the product insert (and its event) roll back.
    const refused = await org.api.post('/api/v1/products', {
      name: 'Nope',
      code,
      key_pair_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(refused.status).toBe(404);
    const first = await org.api.post('/api/v1/products', { name: 'Once', code: uniqueCode() });
    const duplicate = await org.api.post('/api/v1/products', { name: 'Twice', code: first.body.code });
    expect(duplicate.status).toBe(409);
    // A product with a license cannot be deleted: no product.deleted.
    const keyPair = (await org.api.post('/api/v1/key-pairs', {})).body;
    const kept = (
      await org.api.post('/api/v1/products', { name: 'Kept', code: uniqueCode(), key_pair_id: keyPair.id })
    ).body;
    await createLicense(org.api, { product_id: kept.id });
    expect((await org.api.delete(`/api/v1/products/${kept.id}`)).status).toBe(409);
    await settle();

    expect(recorder.of('product.created', (e) => e.data.code === code)).toEqual([]);
    expect(recorder.of('product.created', (e) => e.data.code === first.body.code)).toHaveLength(1);
    expect(recorder.of('product.deleted', (e) => e.data.id === kept.id)).toEqual([]);
  });

  it("keeps each organization's events on its own subjects", async () => {
    const other = await stack.newOrganization();
    const product = (await other.api.post('/api/v1/products', { name: 'Theirs', code: uniqueCode() })).body;
    const event = await recorder.waitFor('product.created', (e) => e.data.id === product.id);
    expect(event.org_id).toBe(other.id);
    expect(
      recorder.events.filter((e) => e.org_id === other.id).every((e) => e.subject.includes(`.${other.id}.`)),
    ).toBe(true);
  });

  it("publishes each license's changes in the order they were made, while batches of other changes go out beside them", async () => {
    const keyPair = (await org.api.post('/api/v1/key-pairs', { name: 'order' })).body;
    const product = (
      await org.api.post('/api/v1/products', {
        name: 'order',
        code: uniqueCode('order'),
        key_pair_id: keyPair.id,
      })
    ).body;
    const licenses = await Promise.all(
      Array.from({ length: 6 }, () => createLicense(org.api, { product_id: product.id })),
    );
    // Six writers at once, each changing its own license ten times in a row: the outbox fills
    // faster than one event at a time, so the relay publishes batches of several.
    await Promise.all(
      licenses.map(async (license) => {
        for (let i = 0; i < 10; i += 1) {
          const response = await org.api.patch(`/api/v1/licenses/${license.id}`, { customer_id: `c-${i}` });
          expect(response.status).toBe(200);
        }
      }),
    );
    await settle();
    for (const license of licenses) {
      const updates = recorder.of('license.updated', (e) => e.data.id === license.id);
      expect(updates.map((e) => e.data.customer_id)).toEqual(Array.from({ length: 10 }, (_, i) => `c-${i}`));
    }
  });

  it('publishes an event as soon as its change commits, not at the next poll of the outbox', async () => {
    // The relays look at an idle outbox only every 5 s: the commit itself must wake them.
    for (let i = 0; i < 3; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      const created = await org.api.post('/api/v1/key-pairs', { name: `prompt-${i}` });
      await recorder.waitFor('key_pair.created', (e) => e.data.id === created.body.id);
      expect(Date.now() - started).toBeLessThan(1_500);
    }
  });
});
