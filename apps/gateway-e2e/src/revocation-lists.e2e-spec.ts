import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { loadGatewayConfig, startGateway } from '@licensing/app/gateway';
import {
  isRevoked,
  revocationEntry,
  verifyRevocationList,
  type RevocationList,
} from '@licensing/license-verifier';
import { ApiClient, compactVerifyWithJose, waitFor } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import {
  apiKeyWithScopes,
  createLicense,
  expireLicenseInDatabase,
  productWithKeyPair,
} from './support/fixtures';

const segmentOf = (jws: string, index: number) =>
  JSON.parse(Buffer.from(jws.split('.')[index]!, 'base64url').toString('utf8'));

describe("products' signed revocation lists", () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;
  let client: ApiClient;
  let product: any;
  let keyPair: any;
  let pem: string;

  beforeAll(async () => {
    // A fast expiry sweep, so the test sees an expiry bump the version without waiting 30 s.
    stack = await startStack({
      env: { LICENSE_EXPIRY_SWEEP_MS: '200', REVOCATION_LIST_MAX_AGE_SECONDS: '45' },
    });
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    ({ product, keyPair } = await productWithKeyPair(org.api));
    ({ api: client } = await apiKeyWithScopes(org.api, ['client']));
    pem = (await org.api.get(`/api/v1/products/${product.id}/public-key`)).body.public_key;
  }, 60_000);
  afterAll(() => stack.close());

  const listPath = (since?: number, id: string = product.id) =>
    `/api/v1/products/${id}/revocation-list${since === undefined ? '' : `?since=${since}`}`;
  const fetchList = async (api: ApiClient = client, since?: number) => {
    const response = await api.get(listPath(since));
    expect(response.status).toBe(200);
    return response;
  };
  const license = () => createLicense(org.api, { product_id: product.id });
  const revoke = async (id: string, api: ApiClient = org.api) =>
    expect((await api.delete(`/api/v1/licenses/${id}`)).status).toBe(200);
  const patch = async (id: string, body: Record<string, unknown>) =>
    expect((await org.api.patch(`/api/v1/licenses/${id}`, body)).status).toBe(200);
  const verified = async (jws: string, previous?: RevocationList): Promise<RevocationList> => {
    const result = await verifyRevocationList(jws, pem, { productId: product.id, previous });
    expect(result.errors).toEqual([]);
    return result.list!;
  };

  it('serves a signed list, cacheable, with the version as ETag; a revocation is in the next list and delta', async () => {
    const [kept, revoked] = await Promise.all([license(), license()]);
    const before = await fetchList();
    expect(before.headers.get('content-type')).toBe('application/jose');
    expect(before.headers.get('cache-control')).toBe('public, max-age=45');
    expect(before.headers.get('vary')).toMatch(/authorization/i);
    const held = await verified(before.text);
    expect(before.headers.get('etag')).toBe(`"${held.version}"`);
    expect(segmentOf(before.text, 0)).toEqual({
      alg: 'EdDSA',
      typ: 'licensing-revocation-list+jwt',
      kid: keyPair.id,
    });

    await revoke(revoked.id);
    const revokedAt = (await org.api.get(`/api/v1/licenses/${revoked.id}`)).body.revoked_at;
    const after = await verified((await fetchList()).text);
    expect(after.version).toBe(held.version + 1);
    expect(revocationEntry(after, revoked.serial)).toEqual({
      serial: revoked.serial,
      status: 'revoked',
      at: revokedAt,
    });
    expect(isRevoked(after, revoked)).toBe(true);
    expect(isRevoked(after, kept.serial)).toBe(false);

    const delta = await fetchList(client, held.version);
    expect(segmentOf(delta.text, 0).typ).toBe('licensing-revocation-delta+jwt');
    expect(segmentOf(delta.text, 1)).toMatchObject({
      product_id: product.id,
      since: held.version,
      version: after.version,
      entries: [{ serial: revoked.serial, status: 'revoked', at: revokedAt }],
      removed: [],
    });
    expect(await verified(delta.text, held)).toEqual({
      ...after,
      issued_at: expect.any(String),
      next_update: expect.any(String),
    });

    // Any JOSE library verifies it with the product's public key.
    expect(await compactVerifyWithJose([(await fetchList()).text], pem, 'EdDSA')).toEqual([null]);
  });

  it('answers 304 to If-None-Match of the current version, and the list again once it changed', async () => {
    const first = await fetchList();
    const etag = first.headers.get('etag')!;
    const unchanged = await client.get(listPath(), { 'if-none-match': etag });
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');
    expect(unchanged.headers.get('etag')).toBe(etag);
    expect(unchanged.headers.get('cache-control')).toBe('public, max-age=45');
    expect(
      (await client.get(listPath(Number(JSON.parse(etag))), { 'if-none-match': `W/${etag}` })).status,
    ).toBe(304);

    await revoke((await license()).id);
    const changed = await client.get(listPath(), { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(Number(JSON.parse(changed.headers.get('etag')!))).toBe(Number(JSON.parse(etag)) + 1);
  });

  it('lists suspended licenses, and a reinstate removes the entry through the delta', async () => {
    const suspended = await license();
    const start = await verified((await fetchList()).text);
    await patch(suspended.id, { status: 'suspended' });
    const withEntry = await verified((await fetchList(client, start.version)).text, start);
    expect(revocationEntry(withEntry, suspended.serial)?.status).toBe('suspended');

    await patch(suspended.id, { status: 'active' });
    const delta = (await fetchList(client, withEntry.version)).text;
    expect(segmentOf(delta, 1)).toMatchObject({
      entries: [],
      removed: [{ serial: suspended.serial, at: expect.any(String) }],
    });
    const reinstated = await verified(delta, withEntry);
    expect(reinstated.version).toBe(withEntry.version + 1);
    expect(isRevoked(reinstated, suspended.serial)).toBe(false);
    // The delta gives the same list as the full list of that version.
    expect(reinstated.entries).toEqual((await verified((await fetchList()).text)).entries);

    // A field edit changes no status: no new version.
    await patch(suspended.id, { customer_email: 'someone@example.com' });
    expect((await fetchList()).headers.get('etag')).toBe(`"${reinstated.version}"`);
  });

  it('lists a license once the expiry sweep has stored it as expired, with a new version', async () => {
    const expiring = await license();
    const start = await verified((await fetchList()).text);
    await expireLicenseInDatabase(expiring.id);
    const list = await waitFor(
      async () => {
        const current = await verified((await fetchList()).text);
        return isRevoked(current, expiring.serial) ? current : undefined;
      },
      { what: 'the expiry sweep to list the license' },
    );
    expect(revocationEntry(list, expiring.serial)?.status).toBe('expired');
    expect(list.version).toBeGreaterThan(start.version);
  });

  it('never serves an older list after a newer one, across two gateways and two license services', async () => {
    await stack.startReplica('license-service');
    let second: INestApplication | undefined;
    try {
      second = await startGateway(loadGatewayConfig(stack.env));
      const address = second.getHttpServer().address() as { port: number };
      const gateways = [client, new ApiClient(`http://127.0.0.1:${address.port}`, client.apiKey)];
      let held = await verified((await fetchList()).text);
      for (let round = 0; round < 6; round++) {
        const target = await license();
        const before = held.version;
        await revoke(target.id, gateways[round % 2]!.withKey(org.adminKey));
        // Straight after DELETE: every gateway, whichever license service answers, lists it, and
        // no list is older than one fetched before (`verified` passes the last as `previous`).
        for (const gateway of gateways) {
          const list = await verified((await fetchList(gateway)).text, held);
          expect(list.version).toBeGreaterThan(before);
          expect(isRevoked(list, target.serial)).toBe(true);
          const delta = await verified((await fetchList(gateway, held.version)).text, held);
          expect(delta.entries).toEqual(list.entries);
          held = list;
        }
      }
    } finally {
      await second?.close();
    }
  }, 60_000);

  it('is refused by the SDK when tampered with, replayed older, or for another product', async () => {
    const oldJws = (await fetchList()).text;
    const old = await verified(oldJws);
    await revoke((await license()).id);
    const jws = (await fetchList()).text;
    const current = await verified(jws);
    const [header, payload, signature] = jws.split('.') as [string, string, string];

    const forged = { ...segmentOf(jws, 1), entries: [] };
    const tampered = `${header}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${signature}`;
    const codes = async (text: string, options: Parameters<typeof verifyRevocationList>[2] = {}) =>
      (await verifyRevocationList(text, pem, options)).errors.map((e) => e.code);
    expect(await codes(tampered)).toEqual(['signature_invalid']);
    expect(await codes(`${header}.${payload}.${signature.slice(0, -4)}AAAA`)).toEqual(['signature_invalid']);
    expect(await compactVerifyWithJose([tampered], pem, 'EdDSA')).toEqual([
      'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
    ]);
    // An older list after a newer one: refused, so a replay cannot un-revoke a license.
    expect(await codes(oldJws, { previous: current })).toEqual(['version_regression']);
    // A delta that starts after the list held, or with no list held.
    const delta = (await fetchList(client, old.version + 1)).text;
    expect(await codes(delta, { previous: old })).toEqual(['version_gap']);
    expect(await codes(delta)).toEqual(['version_gap']);
    expect(await codes(jws, { productId: randomUUID() })).toEqual(['product_mismatch']);
    // A license file is not a list, though the same key signed it.
    const file = Buffer.from(
      (await createLicense(org.api, { product_id: product.id })).license_blob,
      'base64',
    ).toString();
    expect(await codes(file)).toEqual(['malformed']);
  });

  it("keeps organizations apart: another organization's key cannot fetch the list", async () => {
    const foreign = await apiKeyWithScopes(other.api, ['client']);
    for (const api of [other.api, foreign.api]) {
      const response = await api.get(listPath());
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('not_found');
    }
    const { product: theirs } = await productWithKeyPair(other.api);
    expect((await client.get(listPath(undefined, theirs.id))).status).toBe(404);
    expect((await other.api.get(listPath(undefined, theirs.id))).status).toBe(200);
  });

  it('is readable by read and client keys, refused without a key, and validates since', async () => {
    const { api: reader } = await apiKeyWithScopes(org.api, ['read']);
    expect((await reader.get(listPath())).status).toBe(200);
    expect((await stack.anonymous.get(listPath())).status).toBe(401);
    for (const since of ['-1', 'x', '1.5']) {
      const response = await client.get(`${listPath()}?since=${since}`);
      expect(response.status).toBe(400);
    }
  });
});
