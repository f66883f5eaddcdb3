import { verifyWithJose } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { createLicense, productWithKeyPair } from './support/fixtures';

describe('licenses through the gateway', () => {
  let stack: TestStack;
  let org: TestOrganization;

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
  });
  afterAll(() => stack.close());

  it.each([
    ['ed25519', 'EdDSA'],
    ['ecdsa-p256', 'ES256'],
    ['rsa-3072', 'PS256'],
  ])(
    'issues a %s license whose downloaded .lic verifies offline with jose and the public-key PEM',
    async (algorithm, alg) => {
      const { product } = await productWithKeyPair(org.api, { default_features: ['pro'] }, algorithm);
      const license = await createLicense(org.api, {
        product_id: product.id,
        customer_email: 'ada@example.com',
      });
      expect(license).toMatchObject({
        product_id: product.id,
        product_code: product.code,
        status: 'active',
        features: ['pro'],
        max_seats: 1,
        revoked_at: null,
      });
      expect(license.serial).toMatch(
        new RegExp(`^LIC-${product.code.toUpperCase()}-[0-9A-HJKMNP-TV-Z]{16}$`),
      );

      const download = await org.api.get(`/api/v1/licenses/${license.id}/download`);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe('application/octet-stream');
      expect(download.headers.get('content-disposition')).toBe(
        `attachment; filename="${license.serial}.lic"`,
      );
      expect(Buffer.from(download.text).toString('base64')).toBe(license.license_blob);

      const publicKey = await org.api.get(`/api/v1/products/${product.id}/public-key`);
      expect(publicKey.status).toBe(200);
      const verified = await verifyWithJose(download.text, publicKey.body.public_key, alg);
      expect(verified.error).toBeUndefined();
      expect(verified.header).toEqual({ alg, typ: 'license+jwt', kid: publicKey.body.key_pair_id });
      expect(verified.claims).toMatchObject({
        sub: license.serial,
        jti: license.id,
        iss: org.id,
        product_id: product.id,
      });
    },
  );

  it('revokes: verify then reports revoked, and revoking again keeps the first revoked_at', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id });
    const before = await org.api.post('/api/v1/licenses/verify', {
      license_blob: license.license_blob,
      product_id: product.id,
    });
    expect(before.body).toMatchObject({ valid: true, errors: [] });

    const revoked = await org.api.delete(`/api/v1/licenses/${license.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.message).toMatch(/revoked/);
    const first = (await org.api.get(`/api/v1/licenses/${license.id}`)).body;
    expect(first.status).toBe('revoked');

    const again = await org.api.delete(`/v1/licenses/${license.id}`);
    expect(again.status).toBe(200);
    expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.revoked_at).toBe(first.revoked_at);

    const after = await org.api.post('/api/v1/licenses/verify', {
      license_blob: license.license_blob,
      product_id: product.id,
    });
    expect(after.body.valid).toBe(false);
    expect(after.body.errors.map((e: { code: string }) => e.code)).toEqual(['revoked']);
  });
});
