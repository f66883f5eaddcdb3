import {
  createActivationRelease,
  createActivationRequest,
  verifyActivationFile,
} from '@licensing/license-verifier';
import { ApiClient } from '@licensing/shared/testing';
import { apiKeyWithScopes, createLicense, productWithKeyPair } from './support/fixtures';
import { TestOrganization, TestStack, startStack } from './support/stack';

/**
 * Air-gapped activation, end to end with the SDK on the machine's side: a request file made
 * offline, the service's signed activation file, verified offline with the product's public key,
 * and the release file that gives the seat back.
 */
describe('air-gapped activation (POST /activations/offline)', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let client: ApiClient;
  let productId: string;
  let publicKey: string;

  const license = (body: Record<string, unknown> = {}) =>
    createLicense(org.api, { product_id: productId, license_type: 'floating', max_seats: 1, ...body });
  const activateOffline = async (serial: string, fingerprint: string) => {
    const request = await createActivationRequest({
      licenseKey: serial,
      fingerprint,
      components: { cpu: 'c1' },
    });
    const response = await client.post('/api/v1/activations/offline', { request: request.request });
    return { request, response };
  };
  const seatsOf = async (licenseId: string) =>
    (await org.api.get(`/api/v1/activations?license_id=${licenseId}`)).body.activations as {
      fingerprint: string;
    }[];

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
    client = (await apiKeyWithScopes(org.api, ['client'])).api;
    const { product } = await productWithKeyPair(org.api);
    productId = product.id;
    publicKey = (await org.api.get(`/api/v1/products/${productId}/public-key`)).body.public_key;
  });
  afterAll(() => stack.close());

  it('answers a signed activation file that the SDK verifies offline, and takes a seat like an online activation', async () => {
    const { id, serial } = await license();
    const { request, response } = await activateOffline(serial, 'air-1');
    expect(response.status).toBe(201);
    const verified = await verifyActivationFile(response.body.activation_file, publicKey, {
      nonce: request.nonce,
      machineKey: request.machineKey,
      fingerprint: 'air-1',
      productId,
    });
    expect(verified.errors).toEqual([]);
    expect(verified.activation).toMatchObject({
      activation_id: response.body.activation.id,
      serial,
      license_id: id,
      fingerprint: 'air-1',
      components: { cpu: 'c1' },
      expires_at: response.body.expires_at,
    });
    expect((await seatsOf(id)).map((a) => a.fingerprint)).toEqual(['air-1']);
    // The file lives for the organization's checkout TTL (30 days by default), not the license's year.
    expect(Date.parse(response.body.expires_at)).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);
    expect(Date.parse(response.body.expires_at)).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    // The one seat is held: an online activation of another machine is refused.
    const online = await client.post('/api/v1/activations', { license_key: serial, fingerprint: 'online-1' });
    expect(online.body.code).toBe('seat_limit_reached');
    // Submitting the same request again renews the same seat (200), with a new file.
    const again = await client.post('/api/v1/activations/offline', {
      request: request.request,
      valid_days: 7,
    });
    expect(again.status).toBe(200);
    expect(again.body.activation.id).toBe(response.body.activation.id);
    expect(Date.parse(again.body.expires_at)).toBeLessThan(Date.parse(response.body.expires_at));
  });

  it('gives exactly as many seats as the license has to parallel offline requests', async () => {
    const { id, serial } = await license({ max_seats: 3 });
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => activateOffline(serial, `race-${i}`).then((r) => r.response)),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(3);
    expect(answers.filter((answer) => answer.status !== 201).map((answer) => answer.body.code)).toEqual(
      Array(7).fill('seat_limit_reached'),
    );
    expect(await seatsOf(id)).toHaveLength(3);
  });

  it('refuses a revoked license with license_not_active, and takes no seat', async () => {
    const { id, serial } = await license();
    expect((await org.api.delete(`/api/v1/licenses/${id}`)).status).toBe(200);
    const { response } = await activateOffline(serial, 'air-revoked');
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('license_not_active');
    expect(await seatsOf(id)).toEqual([]);
  });

  it('refuses a request whose signature is not by the key it carries', async () => {
    const { serial } = await license();
    const mine = await createActivationRequest({ licenseKey: serial, fingerprint: 'forged' });
    const other = await createActivationRequest({ licenseKey: serial, fingerprint: 'forged' });
    const [header, payload] = mine.request.split('.');
    const forged = `${header}.${payload}.${other.request.split('.')[2]}`;
    const response = await client.post('/api/v1/activations/offline', { request: forged });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('validation_failed');
  });

  it('fails SDK verification of a tampered activation file, of one for another request, and with another key', async () => {
    const { serial } = await license();
    const { request, response } = await activateOffline(serial, 'air-tamper');
    const file: string = response.body.activation_file;
    const [header, payload, signature] = file.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, fingerprint: 'other-machine', exp: claims.exp + 86_400 * 365 })).toString('base64url')}.${signature}`;
    const codes = async (candidate: string, key = publicKey, options = {}) =>
      (await verifyActivationFile(candidate, key, options)).errors.map((e) => e.code);

    expect(await codes(tampered)).toEqual(['signature_invalid']);
    expect(
      await codes(file, publicKey, {
        nonce: (await createActivationRequest({ licenseKey: serial, fingerprint: 'x' })).nonce,
      }),
    ).toEqual(['nonce_mismatch']);
    const { product: otherProduct } = await productWithKeyPair(org.api);
    const otherKey = (await org.api.get(`/api/v1/products/${otherProduct.id}/public-key`)).body.public_key;
    expect(await codes(file, otherKey)).toEqual(['signature_invalid']);
    expect(await codes(file, publicKey, { now: Date.parse(response.body.expires_at) })).toEqual(['expired']);
    expect(await codes('not.a.file')).toEqual(['malformed']);
    expect(
      await codes(file, publicKey, { machineKey: request.machineKey, fingerprint: 'air-tamper' }),
    ).toEqual([]);
  });

  it('frees the seat on a release signed by the machine key, idempotently, and refuses one signed by another key', async () => {
    const { id, serial } = await license();
    const { request, response } = await activateOffline(serial, 'air-release');
    const file: string = response.body.activation_file;

    const stranger = await createActivationRequest({ licenseKey: serial, fingerprint: 'air-release' });
    const forged = await createActivationRelease(file, stranger.machineKey);
    const refused = await client.post('/api/v1/activations/offline/release', { release: forged });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('validation_failed');
    expect(await seatsOf(id)).toHaveLength(1);

    const release = await createActivationRelease(file, request.machineKey);
    const released = await client.post('/api/v1/activations/offline/release', { release });
    expect(released.status).toBe(200);
    expect(await seatsOf(id)).toEqual([]);
    // Released twice: nothing more happens.
    const repeated = await client.post('/api/v1/activations/offline/release', { release });
    expect(repeated.status).toBe(200);
    // The seat is free for another machine.
    expect((await activateOffline(serial, 'air-next')).response.status).toBe(201);
  });
});
