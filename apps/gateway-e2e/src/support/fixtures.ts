import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ApiClient, TEST_DATABASE_URL } from '@licensing/shared/testing';

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

// ---------------------------------------------------------------------------------------------
// Helpers for the licenses-api, verify and auth suites.
// ---------------------------------------------------------------------------------------------

/** The `code`s of a verify response's errors, in order. */
export const errorCodes = (body: { errors?: { code: string }[] }): string[] =>
  (body.errors ?? []).map((e) => e.code);

/** The compact JWS inside a license_blob. */
export const jwsOf = (blob: string): string => Buffer.from(blob, 'base64').toString('utf8');

/** Base64 of a compact JWS, as the API carries it. */
export const blobOf = (jws: string): string => Buffer.from(jws, 'utf8').toString('base64');

/** The decoded header and payload of a license_blob (nothing is verified). */
export function decodeBlob(blob: string): {
  header: Record<string, any>;
  claims: Record<string, any>;
  segments: string[];
} {
  const segments = jwsOf(blob).split('.');
  const json = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  return { header: json(segments[0]!), claims: json(segments[1]!), segments };
}

/** base64url of a JSON value: a JWS header or payload segment. */
export const segmentOf = (value: unknown): string =>
  Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

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

/**
 * Runs SQL against the test database, for states the API cannot reach (a license past its
 * valid_until, for instance). A short-lived connection per call keeps tests independent.
 */
export async function sql<T = any>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * Moves a license's validity window into the past (valid_from two days ago, valid_until one day
 * ago), leaving its stored status `active` and its signed claims untouched.
 */
export async function expireLicenseInDatabase(licenseId: string): Promise<void> {
  const rows = await sql(
    `UPDATE license.licenses
        SET valid_from = now() - interval '2 days', valid_until = now() - interval '1 day'
      WHERE id = $1 RETURNING id`,
    [licenseId],
  );
  expect(rows).toHaveLength(1);
}
