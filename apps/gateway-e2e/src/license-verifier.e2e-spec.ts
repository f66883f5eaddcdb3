import { verifyLicense } from '@licensing/license-verifier';
import { errorCodes } from '@licensing/shared/testing';
import { ALGORITHMS, issueLicenseFiles, verifierCases, type IssuedFiles } from './support/license-files';
import { TestOrganization, TestStack, startStack } from './support/stack';

/**
 * The verifier SDK against license files the running service issued, for each key algorithm: the
 * genuine files verify, every tampered, forged or misapplied one is refused with the contract's
 * code, and on every case the service's own verify (public_key mode) agrees.
 */
describe('the verifier SDK on license files the service issued', () => {
  let stack: TestStack;
  let org: TestOrganization;
  const files = {} as Record<string, IssuedFiles>;

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
    await Promise.all(
      ALGORITHMS.map(async (algorithm) => {
        files[algorithm] = await issueLicenseFiles(org.api, algorithm);
      }),
    );
  }, 60_000);
  afterAll(() => stack.close());

  describe.each(ALGORITHMS)('%s', (algorithm) => {
    it('answers every case with the expected codes', async () => {
      const cases = verifierCases(files[algorithm]!);
      const answers = await Promise.all(
        cases.map(async (c) => {
          const result = await verifyLicense(c.input, c.publicKey as string, c.options);
          expect(result.valid).toBe(result.errors.length === 0);
          return { name: c.name, codes: result.errors.map((e) => e.code) };
        }),
      );
      expect(answers).toEqual(cases.map((c) => ({ name: c.name, codes: c.expected })));
    });

    it('agrees with the online verify (public_key mode) on every case it can compare', async () => {
      const cases = verifierCases(files[algorithm]!).filter((c) => c.comparableOnline);
      const online = await Promise.all(
        cases.map(async (c) => {
          const blob = c.input.includes('.') ? Buffer.from(c.input).toString('base64') : c.input;
          const response = await org.api.post('/api/v1/licenses/verify', {
            license_blob: blob,
            public_key: c.publicKey,
          });
          expect(response.status).toBe(200);
          return { name: c.name, codes: errorCodes(response.body) };
        }),
      );
      expect(online).toEqual(cases.map((c) => ({ name: c.name, codes: c.expected })));
    });

    it('decodes the same license summary the online verify returns', async () => {
      const f = files[algorithm]!;
      const [offline, online] = await Promise.all([
        verifyLicense(f.jws, f.pem, { productId: f.product.id }),
        org.api.post('/api/v1/licenses/verify', {
          license_blob: f.license.license_blob,
          product_id: f.product.id,
        }),
      ]);
      expect(offline.valid).toBe(true);
      const { serial, product_id, customer_id, features, entitlements, valid_from, valid_until, is_expired } =
        offline.license!;
      expect({
        serial,
        product_id,
        customer_id,
        features,
        entitlements,
        valid_from,
        valid_until,
        is_expired,
      }).toEqual(online.body.license);
      expect(offline.license).toMatchObject({ license_id: f.license.id, key_id: f.product.key_pair_id });
    });
  });
});
