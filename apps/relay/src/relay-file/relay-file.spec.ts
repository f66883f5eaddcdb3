import { randomUUID } from 'node:crypto';
import { generateKeyPair, signJws } from '@licensing/license-format';
import { initRelay } from '../relay';
import { RelayStore } from '../store/relay-store';
import {
  blob,
  productFixture,
  relayFile,
  tempDir,
  type ProductFixture,
  type RelayFileInput,
} from '../testing/relay-fixtures';
import { parseProductKey, type ProductKey } from './product-key';
import { loadRelayFile, RelayFileError } from './relay-file';

const SITE = 'Plant 4, building B';
const DAY_MS = 86_400_000;

describe('loading a relay file', () => {
  let product: ProductFixture;
  let productKey: ProductKey;
  let relayKey: string;
  let store: RelayStore;
  let remove: () => void;

  beforeAll(async () => {
    product = await productFixture();
    productKey = await parseProductKey(product.publicKeyPem);
  });

  beforeEach(async () => {
    const temp = tempDir();
    remove = temp.remove;
    relayKey = (await initRelay(temp.dir, SITE)).public_key;
    store = RelayStore.open(temp.dir);
  });

  afterEach(() => {
    store.close();
    remove();
  });

  const file = (input: Partial<RelayFileInput> = {}, by = product) =>
    relayFile(by, { relayPublicKey: relayKey, site: SITE, ...input });
  const refusal = (input: string, key = productKey, now = Date.now()) =>
    loadRelayFile(input, store, key, now).then(
      () => 'loaded',
      (error: unknown) => (error instanceof RelayFileError ? error.code : String(error)),
    );

  it('loads a relay file issued to this relay, as a blob or as the JWS text', async () => {
    const relayFileId = randomUUID();
    const row = await loadRelayFile(file({ seats: 7, relayFileId }), store, productKey, Date.now());
    expect(row).toMatchObject({ relay_file_id: relayFileId, max_seats: 7, product_id: product.productId });
    expect(store.relayFile()).toEqual(row);
    const text = Buffer.from(file({ relayFileId }), 'base64').toString('utf8');
    await expect(refusal(`${text}\n`)).resolves.toBe('loaded');
  });

  it('takes the lease lifetime from the policy heartbeat interval', async () => {
    const row = await loadRelayFile(file({ heartbeatIntervalSeconds: 90 }), store, productKey, Date.now());
    expect(row.lease_seconds).toBe(90);
  });

  it('refuses a signature that does not verify with the product key: signature_invalid', async () => {
    const other = await productFixture();
    await expect(refusal(file({}, { ...other, productId: product.productId }))).resolves.toBe(
      'signature_invalid',
    );
    // A claim changed after signing.
    const [header, payload, signature] = Buffer.from(file(), 'base64').toString('utf8').split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
    const forged = Buffer.from(JSON.stringify({ ...claims, max_seats: 500 })).toString('base64url');
    await expect(refusal(blob(`${header}.${forged}.${signature}`))).resolves.toBe('signature_invalid');
    expect(store.relayFile()).toBeUndefined();
  });

  it('refuses what is not a relay file: malformed', async () => {
    await expect(refusal('not a license')).resolves.toBe('malformed');
    await expect(refusal(file({ withoutRelay: true }))).resolves.toBe('malformed');
    // A relay claim of the wrong shape.
    const payload = {
      ...JSON.parse(
        Buffer.from(Buffer.from(file(), 'base64').toString().split('.')[1]!, 'base64url').toString(),
      ),
      relay: { id: 7 },
    };
    await expect(refusal(blob(signJws(payload, product)))).resolves.toBe('malformed');
    // A JWS of another type signed by the product key (a revocation list).
    await expect(
      refusal(blob(signJws({ product_id: product.productId }, product, 'licensing-revocation-list+jwt'))),
    ).resolves.toBe('malformed');
  });

  it('refuses a file past its exp, or past the license end: file_expired', async () => {
    const issuedAt = new Date(Date.now() - 40 * DAY_MS);
    await expect(refusal(file({ issuedAt, expiresAt: new Date(Date.now() - 1000) }))).resolves.toBe(
      'file_expired',
    );
    await expect(
      refusal(
        file({
          issuedAt,
          validUntil: new Date(Date.now() - DAY_MS),
          expiresAt: new Date(Date.now() + DAY_MS),
        }),
      ),
    ).resolves.toBe('file_expired');
  });

  it('refuses a license not valid yet: not_yet_valid', async () => {
    await expect(refusal(file({ validFrom: new Date(Date.now() + DAY_MS) }))).resolves.toBe('not_yet_valid');
  });

  it("refuses a file issued to another relay's key: relay_key_mismatch", async () => {
    const other = await generateKeyPair('ed25519');
    await expect(refusal(file({ relayPublicKey: other.publicKeyPem }))).resolves.toBe('relay_key_mismatch');
    await expect(refusal(file({ relayPublicKey: 'not a key' }))).resolves.toBe('relay_key_mismatch');
  });

  it('accepts the relay key whatever its line breaks', async () => {
    await expect(refusal(file({ relayPublicKey: relayKey.replace(/\n/g, '\r\n') }))).resolves.toBe('loaded');
  });

  it('refuses a file for another site: site_mismatch', async () => {
    await expect(refusal(file({ site: 'Plant 5' }))).resolves.toBe('site_mismatch');
  });

  it('refuses a file of another product when the key names its product: product_mismatch', async () => {
    const named = await parseProductKey(
      JSON.stringify({ product_id: randomUUID(), public_key: product.publicKeyPem, algorithm: 'ed25519' }),
    );
    await expect(refusal(file(), named)).resolves.toBe('product_mismatch');
    const same = await parseProductKey(
      JSON.stringify({ product_id: product.productId, public_key: product.publicKeyPem }),
    );
    await expect(refusal(file(), same)).resolves.toBe('loaded');
  });

  it('refuses a file older than the one loaded: relay_file_replayed', async () => {
    const older = file({ issuedAt: new Date(Date.now() - 60_000) });
    await expect(refusal(file())).resolves.toBe('loaded');
    const loaded = store.relayFile()!;
    await expect(refusal(older)).resolves.toBe('relay_file_replayed');
    expect(store.relayFile()).toEqual(loaded);
    // The same file again, and a newer one, load.
    await expect(refusal(Buffer.from(loaded.blob, 'base64').toString())).resolves.toBe('loaded');
    await expect(refusal(file({ issuedAt: new Date(Date.now() + 1000), seats: 9 }))).resolves.toBe('loaded');
    expect(store.relayFile()!.max_seats).toBe(9);
  });

  it('refuses a file of another license than the one served: license_mismatch', async () => {
    await expect(refusal(file())).resolves.toBe('loaded');
    await expect(refusal(file({ licenseId: randomUUID() }))).resolves.toBe('license_mismatch');
  });
});
