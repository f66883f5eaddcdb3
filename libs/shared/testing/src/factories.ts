import { randomBytes } from 'node:crypto';
import { ApiClient } from './http-client';

// Factories for tests that speak HTTP to a gateway: each creates what a test starts from, through
// the public API, and fails the test at once if the API refuses.

export const uniqueCode = (prefix = 'app'): string => `${prefix}-${randomBytes(4).toString('hex')}`;

/** A key pair, and a product signed with it: the usual starting point of a license test. */
export async function productWithKeyPair(
  api: ApiClient,
  product: Record<string, unknown> = {},
  algorithm = 'ed25519',
): Promise<{ product: any; keyPair: any }> {
  const keyPair = await api.post('/api/v1/key-pairs', { name: 'signing', algorithm });
  expect(keyPair.status).toBe(201);
  const created = await api.post('/api/v1/products', {
    name: 'Photo Editor',
    code: uniqueCode(),
    key_pair_id: keyPair.body.id,
    ...product,
  });
  expect(created.status).toBe(201);
  return { product: created.body, keyPair: keyPair.body };
}

export async function createLicense(api: ApiClient, body: Record<string, unknown>): Promise<any> {
  const created = await api.post('/api/v1/licenses', body);
  expect(created.status).toBe(201);
  return created.body;
}

/** Issues an API key of the organization with the given scopes, and a client authenticated with it. */
export async function apiKeyWithScopes(
  api: ApiClient,
  scopes: string[],
  name = `key-${scopes.join('-')}`,
): Promise<{ key: any; api: ApiClient }> {
  const created = await api.post('/api/v1/api-keys', { name, scopes });
  expect(created.status).toBe(201);
  return { key: created.body, api: api.withKey(created.body.key) };
}
