// Issues many licenses fast with the license service's own code: its entities, serial generator,
// key vault and LicenseSigner from the compiled service (dist/), in the same steps as
// LicensesService.issue — the catalog row locked FOR SHARE, each license built and signed, then
// inserted — but a thousand licenses per transaction and one multi-row INSERT, instead of a
// transaction, an outbox event and a bus round trip each. The rows are the ones the service writes;
// what is skipped is their `license.created` events (nothing the benchmark reads consumes them:
// the revocation cache is filled by the harness's check-revocation pass instead).
require('../../tools/register-paths');
const path = require('node:path');
const { randomUUID } = require('node:crypto');

const root = path.join(__dirname, '..', '..');
const service = (file) => require(path.join(root, 'dist/apps/license-service/src', file));

const DAY_MS = 86_400_000;

async function bulkIssuer(databaseUrl) {
  require('reflect-metadata');
  const { DataSource } = require('typeorm');
  const { serviceDataSourceOptions } = require('@licensing/shared/database');
  const { generateSerial } = require('@licensing/license-format');
  const { LICENSE_ENTITIES, LICENSE_SCHEMA } = service('app.module.js');
  const { loadLicenseServiceConfig } = service('config.js');
  const { LicenseEntity } = service('licenses/license.entity.js');
  const { CatalogProductEntity } = service('catalog/catalog-product.entity.js');
  const { LicenseSigner } = service('licenses/license-signer.service.js');
  const { SigningKeysService } = service('signing/signing-keys.service.js');
  const { MasterKeyVault } = require('@licensing/shared/crypto');

  const config = loadLicenseServiceConfig({ ...process.env, DATABASE_URL: databaseUrl });
  const dataSource = new DataSource(
    serviceDataSourceOptions({
      url: databaseUrl,
      schema: LICENSE_SCHEMA,
      entities: LICENSE_ENTITIES,
      migrations: [],
    }),
  );
  await dataSource.initialize();
  const signer = new LicenseSigner(
    new SigningKeysService(dataSource, new MasterKeyVault(config.SIGNING_MASTER_KEYS, 'SIGNING_MASTER_KEYS')),
  );

  return {
    /** `requests`: CreateLicenseDto-shaped objects of one product. Answers [{id, serial}]. */
    async issue(orgId, productId, requests) {
      return dataSource.transaction(async (manager) => {
        const product = await manager.findOne(CatalogProductEntity, {
          where: { id: productId, orgId },
          lock: { mode: 'pessimistic_read' },
        });
        if (!product) throw new Error(`no catalog product ${productId}`);
        const now = new Date();
        const licenses = [];
        for (const dto of requests) {
          const licenseType = dto.license_type ?? 'subscription';
          const validDays = licenseType === 'perpetual' ? 0 : (dto.valid_days ?? product.defaultValidDays);
          const license = Object.assign(new LicenseEntity(), {
            id: randomUUID(),
            orgId,
            productId: product.id,
            serial: generateSerial(product.code),
            licenseType,
            customerId: dto.customer_id ?? null,
            customerEmail: dto.customer_email ?? null,
            status: 'active',
            validFrom: now,
            validUntil: validDays === 0 ? null : new Date(now.getTime() + validDays * DAY_MS),
            features: dto.features ?? product.defaultFeatures,
            maxSeats: licenseType === 'node_locked' ? 1 : (dto.max_seats ?? 1),
            hardwareBinding: null,
            keyPairId: product.keyPairId,
            createdAt: now,
            updatedAt: now,
            revokedAt: null,
          });
          await signer.sign(manager, license, product, now);
          licenses.push(license);
        }
        await manager.insert(LicenseEntity, licenses);
        return licenses.map((l) => ({ id: l.id, serial: l.serial }));
      });
    },
    close: () => dataSource.destroy(),
  };
}

module.exports = { bulkIssuer };
