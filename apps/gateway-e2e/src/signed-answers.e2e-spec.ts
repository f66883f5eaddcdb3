import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { loadGatewayConfig, startGateway } from '@licensing/app/gateway';
import { verifySignedAnswer, type PublicJwkSet } from '@licensing/license-verifier';
import { ApiClient, ApiResponse, verifyDetachedWithJose, waitFor } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, productWithKeyPair, sql } from './support/fixtures';

const headerOf = (signature: string) =>
  JSON.parse(Buffer.from(signature.split('.')[0]!, 'base64url').toString('utf8'));

describe('signed online answers (Licensing-Nonce → Licensing-Signature)', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;
  let client: ApiClient;
  let otherClient: ApiClient;
  let product: any;
  let license: any;
  let jwks: PublicJwkSet;

  beforeAll(async () => {
    stack = await startStack();
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    ({ product } = await productWithKeyPair(org.api));
    license = await createLicense(org.api, { product_id: product.id });
    ({ api: client } = await apiKeyWithScopes(org.api, ['client']));
    ({ api: otherClient } = await apiKeyWithScopes(other.api, ['client']));
  }, 60_000);
  afterAll(() => stack.close());

  /** The four routes whose answers are signed, each as its client would call it. */
  const calls: [string, (api: ApiClient, headers?: Record<string, string>) => Promise<ApiResponse>][] = [
    [
      'verify',
      (api, headers) =>
        api.post(
          '/api/v1/licenses/verify',
          { product_id: product.id, license_blob: license.license_blob },
          headers,
        ),
    ],
    ['validate', (api, headers) => api.post('/api/v1/licenses/validate', { key: license.serial }, headers)],
    [
      'check-revocation',
      (api, headers) => api.post('/api/v1/licenses/check-revocation', { serials: [license.serial] }, headers),
    ],
    [
      'sync',
      (api, headers) =>
        api.post(
          '/api/v1/licenses/sync',
          { license_serial: license.serial, report_id: randomUUID() },
          headers,
        ),
    ],
  ];
  const nonce = () => randomUUID();

  it('publishes the response key as a JWK Set to client keys, the same on every call', async () => {
    const response = await client.get('/api/v1/organizations/current/response-keys');
    expect(response.status).toBe(200);
    jwks = response.body;
    expect(jwks.keys).toEqual([
      {
        kty: 'OKP',
        crv: 'Ed25519',
        x: expect.any(String),
        kid: expect.any(String),
        alg: 'EdDSA',
        use: 'sig',
        status: 'active',
      },
    ]);
    expect((await org.api.get('/v1/organizations/current/response-keys')).body).toEqual(jwks);
    expect((await stack.anonymous.get('/api/v1/organizations/current/response-keys')).status).toBe(401);
    // Stored sealed: the private half is not in the row as a PEM.
    const [row] = await sql(`SELECT private_key_ciphertext FROM identity.response_keys WHERE org_id = $1`, [
      org.id,
    ]);
    expect(row.private_key_ciphertext.toString('latin1')).not.toContain('PRIVATE KEY');
  });

  it.each(calls)(
    'signs a %s answer over its exact bytes, with the nonce and the time',
    async (_name, call) => {
      const sent = nonce();
      const response = await call(client, { 'licensing-nonce': sent });
      expect(response.status).toBe(200);
      const signature = response.headers.get('licensing-signature')!;
      expect(signature).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
      const header = headerOf(signature);
      expect(header).toEqual({
        alg: 'EdDSA',
        typ: 'licensing-answer+jws',
        kid: jwks.keys[0]!.kid,
        nonce: sent,
        iat: expect.any(Number),
      });
      expect(Math.abs(header.iat * 1000 - Date.now())).toBeLessThan(60_000);

      const sdk = await verifySignedAnswer({ body: response.text, signature, nonce: sent }, jwks);
      expect(sdk.errors).toEqual([]);
      // Any JOSE library: the detached payload put back, verified with the JWK Set.
      expect(await verifyDetachedWithJose([{ signature, body: response.text }], jwks)).toEqual([{ header }]);
    },
  );

  it.each(calls)('leaves a %s answer unsigned when the request sends no nonce', async (_name, call) => {
    const response = await call(client);
    expect(response.status).toBe(200);
    expect(response.headers.get('licensing-signature')).toBeNull();
    expect(
      (await verifySignedAnswer({ body: response.text, signature: null, nonce: nonce() }, jwks)).errors,
    ).toEqual([expect.objectContaining({ code: 'unsigned' })]);
  });

  it('refuses a spoofed answer: another body, another nonce, a replay, or too old', async () => {
    const sent = nonce();
    const response = await calls[2]![1](client, { 'licensing-nonce': sent });
    const signature = response.headers.get('licensing-signature')!;
    const codes = async (body: string, sentNonce: string, options = {}) =>
      (await verifySignedAnswer({ body, signature, nonce: sentNonce }, jwks, options)).errors.map(
        (e) => e.code,
      );

    const forged = response.text.replace('"status":"active"', '"status":"ok"');
    expect(forged).not.toBe(response.text);
    expect(await codes(forged, sent)).toEqual(['signature_invalid']);
    // The same genuine answer replayed to a later request (which sent its own nonce).
    expect(await codes(response.text, nonce())).toEqual(['nonce_mismatch']);
    expect(await codes(response.text, sent, { now: Date.now() + 10 * 60_000 })).toEqual(['too_old']);
    expect(await codes(response.text, sent, { now: Date.now() - 10 * 60_000 })).toEqual(['not_yet_signed']);
    // Signed for another nonce in the header: changing it breaks the signature.
    const sig = signature.split('.')[2];
    const other = Buffer.from(JSON.stringify({ ...headerOf(signature), nonce: 'replayed-nonce' })).toString(
      'base64url',
    );
    expect(
      (
        await verifySignedAnswer(
          { body: response.text, signature: `${other}..${sig}`, nonce: 'replayed-nonce' },
          jwks,
        )
      ).errors.map((e) => e.code),
    ).toEqual(['signature_invalid']);
    expect(await verifyDetachedWithJose([{ signature, body: forged }], jwks)).toEqual([
      { error: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' },
    ]);
  });

  it('refuses a malformed nonce with 400', async () => {
    const reportId = randomUUID();
    for (const bad of ['short', 'x'.repeat(129), 'has space here', 'nonce"quote']) {
      const response = await client.post(
        '/api/v1/licenses/sync',
        { license_serial: license.serial, report_id: reportId },
        { 'licensing-nonce': bad },
      );
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('validation_failed');
    }
  });

  it('signs with a key per organization: another organization answers with its own, which does not verify here', async () => {
    const theirs = (await otherClient.get('/api/v1/organizations/current/response-keys'))
      .body as PublicJwkSet;
    expect(theirs.keys[0]!.kid).not.toBe(jwks.keys[0]!.kid);
    expect(theirs.keys[0]!.x).not.toBe(jwks.keys[0]!.x);
    const sent = nonce();
    const response = await otherClient.post(
      '/api/v1/licenses/check-revocation',
      { serials: [license.serial] },
      { 'licensing-nonce': sent },
    );
    expect(response.body.results[0].status).toBe('not_found');
    const signature = response.headers.get('licensing-signature')!;
    expect((await verifySignedAnswer({ body: response.text, signature, nonce: sent }, theirs)).valid).toBe(
      true,
    );
    // Org A's key set: the kid is unknown, and even forced, the key does not verify it.
    expect(
      (await verifySignedAnswer({ body: response.text, signature, nonce: sent }, jwks)).errors.map(
        (e) => e.code,
      ),
    ).toEqual(['unknown_key']);
    const { kid: _kid, ...anonymous } = jwks.keys[0]!;
    expect(
      (await verifySignedAnswer({ body: response.text, signature, nonce: sent }, anonymous)).errors.map(
        (e) => e.code,
      ),
    ).toEqual(['signature_invalid']);
  });

  it('signs with the same stored key on another gateway replica', async () => {
    let second: INestApplication | undefined;
    try {
      second = await startGateway(loadGatewayConfig(stack.env));
      const address = second.getHttpServer().address() as { port: number };
      const replica = new ApiClient(`http://127.0.0.1:${address.port}`, client.apiKey);
      const sent = nonce();
      const response = await calls[1]![1](replica, { 'licensing-nonce': sent });
      const signature = response.headers.get('licensing-signature')!;
      expect((await verifySignedAnswer({ body: response.text, signature, nonce: sent }, jwks)).valid).toBe(
        true,
      );
    } finally {
      await second?.close();
    }
  });

  it('rotates the response key in two steps, on every gateway, and keeps answers signed before verifiable', async () => {
    const rotating = await stack.newOrganization();
    const { product: ownProduct } = await productWithKeyPair(rotating.api);
    const own = await createLicense(rotating.api, { product_id: ownProduct.id });
    const { api: ownClient } = await apiKeyWithScopes(rotating.api, ['client']);
    const second: INestApplication = await startGateway(loadGatewayConfig(stack.env));
    const { port } = second.getHttpServer().address() as { port: number };
    const elsewhere = new ApiClient(`http://127.0.0.1:${port}`, ownClient.apiKey);
    const signedBy = async (api: ApiClient) => {
      const sent = nonce();
      const response = await api.post(
        '/api/v1/licenses/check-revocation',
        { serials: [own.serial] },
        { 'licensing-nonce': sent },
      );
      const signature = response.headers.get('licensing-signature')!;
      return {
        kid: headerOf(signature).kid as string,
        answer: { body: response.text, signature, nonce: sent },
      };
    };
    try {
      const before = await signedBy(elsewhere);
      const published = (await ownClient.get('/api/v1/organizations/current/response-keys'))
        .body as PublicJwkSet;
      expect(published.keys.map((k: any) => [k.kid, k.status])).toEqual([[before.kid, 'active']]);

      // Step 1: the next key is published, and signs nothing yet.
      const next = await rotating.api.post('/api/v1/organizations/current/response-keys');
      expect(next.status).toBe(201);
      expect(next.body).toMatchObject({ kty: 'OKP', crv: 'Ed25519', status: 'next' });
      expect((await rotating.api.post('/api/v1/organizations/current/response-keys')).status).toBe(409);
      const withNext = (await ownClient.get('/api/v1/organizations/current/response-keys'))
        .body as PublicJwkSet;
      expect(withNext.keys.map((k: any) => k.status)).toEqual(['active', 'next']);
      expect((await signedBy(elsewhere)).kid).toBe(before.kid);

      // Step 2: activated through one gateway, it signs on the other at once.
      const activated = await rotating.api.post(
        `/api/v1/organizations/current/response-keys/${next.body.kid}/activate`,
      );
      expect(activated.status).toBe(200);
      expect(activated.body.keys.map((k: any) => [k.kid, k.status])).toEqual([
        [next.body.kid, 'active'],
        [before.kid, 'retired'],
      ]);
      const after = await waitFor(
        async () => {
          const signed = await signedBy(elsewhere);
          return signed.kid === next.body.kid && signed;
        },
        { what: 'the other gateway to sign with the new key', timeoutMs: 2_000 },
      );
      // Both answers verify with the published set: the old one by its retired key.
      const set = activated.body as PublicJwkSet;
      expect((await verifySignedAnswer(after.answer, set)).errors).toEqual([]);
      expect((await verifySignedAnswer(before.answer, set)).errors).toEqual([]);

      // The active key cannot be deleted; a retired one can, and then answers it signed no longer verify.
      const refused = await rotating.api.delete(
        `/api/v1/organizations/current/response-keys/${next.body.kid}`,
      );
      expect(refused.status).toBe(409);
      expect(
        (await rotating.api.delete(`/api/v1/organizations/current/response-keys/${before.kid}`)).status,
      ).toBe(200);
      const pruned = (await ownClient.get('/api/v1/organizations/current/response-keys'))
        .body as PublicJwkSet;
      expect(pruned.keys.map((k: any) => k.kid)).toEqual([next.body.kid]);
      expect((await verifySignedAnswer(before.answer, pruned)).errors).not.toEqual([]);
      // Another organization names none of them.
      expect(
        (await other.api.delete(`/api/v1/organizations/current/response-keys/${next.body.kid}`)).status,
      ).toBe(404);
      await waitFor(
        async () =>
          (await rotating.api.get('/api/v1/audit-events?resource_type=response_key')).body.total === 3,
        { what: 'the creation, the rotation and the deletion in the audit log' },
      );
    } finally {
      await second.close();
    }
  });
});
