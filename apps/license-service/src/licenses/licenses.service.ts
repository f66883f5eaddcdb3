import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Brackets, DataSource } from 'typeorm';
import {
  CreateLicenseDto,
  LicenseListView,
  LicenseView,
  ListLicensesQueryDto,
  MessageView,
  pageOf,
} from '@licensing/contracts';
import { buildClaims, generateSerial, signJws } from '@licensing/license-format';
import { isUniqueViolation, pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { CatalogService } from '../catalog/catalog.service';
import { SigningKeysService } from '../signing/signing-keys.service';
import { LicenseEntity } from './license.entity';
import { toLicenseView } from './license.mapper';

const DAY_MS = 86_400_000;
/** A serial carries 80 random bits; a collision is astronomically rare, but the unique index decides. */
const SERIAL_ATTEMPTS = 3;

/** Issues, lists, reads and revokes licenses. Verification lives in LicenseVerifier. */
@Injectable()
export class LicensesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly catalog: CatalogService,
    private readonly signingKeys: SigningKeysService,
  ) {}

  async create(orgId: string, dto: CreateLicenseDto): Promise<LicenseView> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.issue(orgId, dto);
      } catch (error) {
        if (!isUniqueViolation(error, 'uq_licenses_serial') || attempt === SERIAL_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * The product row stays locked FOR SHARE until the license is committed: a product delete, which
   * locks it for update, waits and then sees this license, or wins and this create finds no product.
   */
  private issue(orgId: string, dto: CreateLicenseDto): Promise<LicenseView> {
    return this.dataSource.transaction(async (manager) => {
      const product = await this.catalog.findLive(manager, orgId, dto.product_id, 'pessimistic_read');
      if (!product.keyPairId) {
        throw new DomainError('key_pair_missing', `Product ${product.id} has no key pair assigned`);
      }
      const privateKey = await this.signingKeys.privateKey(orgId, product.keyPairId, manager);
      if (!privateKey) throw new DomainError('key_pair_missing', `Product ${product.id} has no usable key pair`);

      const licenseType = dto.license_type ?? 'subscription';
      if (licenseType === 'node_locked' && dto.max_seats !== undefined && dto.max_seats !== 1) {
        throw DomainError.validation([{ field: 'max_seats', message: 'a node_locked license has exactly one seat' }]);
      }
      const now = new Date();
      const validDays = licenseType === 'perpetual' ? 0 : (dto.valid_days ?? product.defaultValidDays);
      const license = Object.assign(new LicenseEntity(), {
        id: randomUUID(),
        orgId,
        productId: product.id,
        serial: generateSerial(product.code),
        licenseType,
        customerId: dto.customer_id ?? null,
        customerEmail: dto.customer_email ?? null,
        status: 'active' as const,
        validFrom: now,
        validUntil: validDays === 0 ? null : new Date(now.getTime() + validDays * DAY_MS),
        features: dto.features ?? product.defaultFeatures,
        maxSeats: licenseType === 'node_locked' ? 1 : (dto.max_seats ?? 1),
        hardwareBinding: dto.hardware_binding ? { fingerprint: dto.hardware_binding.fingerprint } : null,
        keyPairId: product.keyPairId,
        createdAt: now,
        updatedAt: now,
        revokedAt: null,
      });
      const claims = buildClaims({
        licenseId: license.id,
        serial: license.serial,
        orgId,
        productId: product.id,
        productCode: product.code,
        licenseType,
        customerId: license.customerId,
        customerEmail: license.customerEmail,
        features: license.features,
        maxSeats: license.maxSeats,
        hardwareBinding: license.hardwareBinding,
        validFrom: license.validFrom,
        validUntil: license.validUntil,
        issuedAt: now,
      });
      license.jws = signJws(claims, { kid: product.keyPairId, privateKey });
      await manager.insert(LicenseEntity, license);
      return toLicenseView(license, product, { withBlob: true });
    });
  }

  async list(orgId: string, query: ListLicensesQueryDto): Promise<LicenseListView> {
    const { skip, take } = pageWindow(pageOf(query));
    const builder = this.dataSource
      .getRepository(LicenseEntity)
      .createQueryBuilder('l')
      .innerJoinAndSelect('l.product', 'p')
      .where('l.org_id = :orgId', { orgId })
      .orderBy('l.createdAt', 'DESC')
      .addOrderBy('l.id', 'DESC')
      // many-to-one join: one row per license, so a plain OFFSET/LIMIT pages correctly
      .offset(skip)
      .limit(take);
    if (query.product_id) builder.andWhere('l.product_id = :productId', { productId: query.product_id });
    if (query.customer_email) {
      const escaped = query.customer_email.replace(/[\\%_]/g, (char) => `\\${char}`);
      builder.andWhere(`l.customer_email ILIKE :email ESCAPE '\\'`, { email: `%${escaped}%` });
    }
    switch (query.status) {
      case undefined:
        break;
      case 'active':
        builder.andWhere(`l.status = 'active' AND (l.valid_until IS NULL OR l.valid_until > now())`);
        break;
      case 'expired':
        builder.andWhere(
          new Brackets((where) =>
            where.where(`l.status = 'expired'`).orWhere(`l.status = 'active' AND l.valid_until <= now()`),
          ),
        );
        break;
      case 'revoked':
      case 'suspended':
        builder.andWhere('l.status = :status', { status: query.status });
        break;
    }
    const [licenses, total] = await builder.getManyAndCount();
    return { licenses: licenses.map((license) => toLicenseView(license, license.product!, { withBlob: false })), total };
  }

  async get(orgId: string, id: string): Promise<LicenseView> {
    const license = await this.dataSource.getRepository(LicenseEntity).findOne({
      where: { id, orgId },
      relations: { product: true },
    });
    if (!license) throw DomainError.notFound('License', id);
    return toLicenseView(license, license.product!, { withBlob: true });
  }

  /** Permanent. Revoking again is a success that keeps the first `revoked_at`, so clients can retry. */
  async revoke(orgId: string, id: string): Promise<MessageView> {
    const now = new Date();
    const result = await this.dataSource
      .getRepository(LicenseEntity)
      .createQueryBuilder()
      .update()
      .set({ status: 'revoked', revokedAt: now, updatedAt: now })
      .where(`id = :id AND org_id = :orgId AND status <> 'revoked'`, { id, orgId })
      .execute();
    if (!result.affected && !(await this.dataSource.getRepository(LicenseEntity).existsBy({ id, orgId }))) {
      throw DomainError.notFound('License', id);
    }
    return { message: `License ${id} revoked` };
  }
}
