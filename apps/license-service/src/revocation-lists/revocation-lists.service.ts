import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RevocationListReply, RevocationListRequest } from '@licensing/contracts';
import { signJws } from '@licensing/license-format';
import { DomainError } from '@licensing/shared/errors';
import { CatalogService } from '../catalog/catalog.service';
import { LICENSE_SERVICE_CONFIG, LicenseServiceConfig } from '../config';
import { LicenseEntity } from '../licenses/license.entity';
import { SigningKeysService } from '../signing/signing-keys.service';
import { ListedLicense, revocationDocument } from './revocation-list-document';
import { RevocationListEntity } from './revocation-list.entity';

/**
 * Products' revocation lists, signed here with the product's key pair: the private key never
 * leaves the license service. Built on every request from one snapshot (the version and the
 * licenses read together), so a list holds exactly the changes up to its version.
 */
@Injectable()
export class RevocationListsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly catalog: CatalogService,
    private readonly signingKeys: SigningKeysService,
    @Inject(LICENSE_SERVICE_CONFIG) private readonly config: LicenseServiceConfig,
  ) {}

  async get(orgId: string, request: RevocationListRequest): Promise<RevocationListReply> {
    const { product_id: productId, known_versions: known = [] } = request;
    const read = await this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const product = await this.catalog.findLive(manager, orgId, productId);
      const counter = await manager.findOneBy(RevocationListEntity, { productId });
      const version = Number(counter?.version ?? 0);
      if (known.includes(version)) return { product, version, licenses: undefined };
      // A `since` ahead of the list (a client that held a list of a database since restored)
      // gets the full list: the SDK then refuses it as a regression rather than applying a delta.
      const since = request.since !== undefined && request.since <= version ? request.since : undefined;
      const query = manager
        .getRepository(LicenseEntity)
        .createQueryBuilder('l')
        .select(['l.serial', 'l.status', 'l.listChangedAt', 'l.updatedAt'])
        .where('l.product_id = :productId', { productId })
        .orderBy('l.serial', 'ASC');
      if (since === undefined) query.andWhere(`l.status <> 'active'`);
      else query.andWhere('l.list_version > :since', { since });
      const licenses = (await query.getMany()).map((license): ListedLicense => ({
        serial: license.serial,
        status: license.status,
        changedAt: license.listChangedAt ?? license.updatedAt,
      }));
      return { product, version, since, licenses };
    });
    if (!read.licenses) return { version: read.version, jws: null };

    const keyPairId = read.product.keyPairId;
    const privateKey = keyPairId ? await this.signingKeys.privateKey(orgId, keyPairId) : undefined;
    if (!keyPairId || !privateKey) {
      throw new DomainError('key_pair_missing', `Product ${productId} has no key pair to sign its list`);
    }
    const { typ, payload } = revocationDocument({
      productId,
      version: read.version,
      since: read.since,
      licenses: read.licenses,
      issuedAt: new Date(),
      nextUpdateSeconds: this.config.REVOCATION_LIST_NEXT_UPDATE_SECONDS,
    });
    return { version: read.version, jws: signJws(payload, { kid: keyPairId, privateKey }, typ) };
  }
}
