import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Brackets, DataSource } from 'typeorm';
import {
  AuditChanges,
  CreateLicenseDto,
  LicenseListView,
  LicenseView,
  ListLicensesQueryDto,
  MessageView,
  Messages,
  UpdateLicenseDto,
  pageOf,
} from '@licensing/contracts';
import { generateSerial } from '@licensing/license-format';
import { isUniqueViolation, pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { Metrics } from '@licensing/shared/metrics';
import { auditChanges, recordAudit, recordEvent } from '@licensing/shared/events';
import { BusClient } from '@licensing/shared/messaging';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { CatalogService } from '../catalog/catalog.service';
import { bumpListVersions } from '../revocation-lists/list-versions';
import { LicenseEntity } from './license.entity';
import { LicenseSigner } from './license-signer.service';
import { applyChanges } from './license-changes';
import { toLicenseView } from './license.mapper';
import { toSerialStatus } from './serial-statuses.service';

const DAY_MS = 86_400_000;
/** A serial carries 80 random bits; a collision is astronomically rare, but the unique index decides. */
const SERIAL_ATTEMPTS = 3;

/** Issues, lists, reads and revokes licenses. Verification lives in LicenseVerifier. */
@Injectable()
export class LicensesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly catalog: CatalogService,
    private readonly signer: LicenseSigner,
    private readonly bus: BusClient,
  ) {}

  async create(orgId: string, dto: CreateLicenseDto): Promise<LicenseView> {
    for (let attempt = 1; ; attempt++) {
      try {
        const license = await this.issue(orgId, dto);
        Metrics.licensesCreated.inc();
        return license;
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
      const licenseType = dto.license_type ?? 'subscription';
      if (licenseType === 'node_locked' && dto.max_seats !== undefined && dto.max_seats !== 1) {
        throw DomainError.validation([
          { field: 'max_seats', message: 'a node_locked license has exactly one seat' },
        ]);
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
        listVersion: null,
        listChangedAt: null,
      });
      await this.signer.sign(manager, license, product, now);
      await manager.insert(LicenseEntity, license);
      const data = toLicenseView(license, product, { withBlob: false });
      await recordEvent(manager, {
        type: 'license.created',
        orgId,
        data,
        occurredAt: now,
        serialStatus: toSerialStatus(license),
      });
      await recordAudit(manager, {
        orgId,
        action: 'created',
        resourceType: 'license',
        resourceId: license.id,
        changes: auditChanges(null, data),
        occurredAt: now,
      });
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
    // Serials are generated upper case; a typed one may not be. Equality keeps the unique index.
    if (query.serial) builder.andWhere('l.serial = :serial', { serial: query.serial.toUpperCase() });
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
    return {
      licenses: licenses.map((license) => toLicenseView(license, license.product!, { withBlob: false })),
      total,
    };
  }

  async get(orgId: string, id: string): Promise<LicenseView> {
    const license = await this.dataSource.getRepository(LicenseEntity).findOne({
      where: { id, orgId },
      relations: { product: true },
    });
    if (!license) throw DomainError.notFound('License', id);
    return toLicenseView(license, license.product!, { withBlob: true });
  }

  /**
   * PATCH: the changed license is signed again, its events recorded with the change, and its new
   * status written through to the revocation cache before this answers.
   */
  async update(orgId: string, id: string, changes: UpdateLicenseDto): Promise<LicenseView> {
    const { license, product } = await this.dataSource.transaction(async (manager) => {
      const license = await manager.findOne(LicenseEntity, {
        where: { id, orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!license) throw DomainError.notFound('License', id);
      if (license.status === 'revoked')
        throw DomainError.conflict(`License ${id} is revoked and cannot change`);
      const product = await manager.findOneByOrFail(CatalogProductEntity, { id: license.productId });
      const now = new Date();
      const statusBefore = license.status;
      const before = toLicenseView(license, product, { withBlob: false });
      applyChanges(license, changes, now);
      license.updatedAt = now;
      await this.signer.sign(manager, license, product, now);
      await manager.save(license);
      // Suspended, reinstated, or an expired license extended: its revocation-list entry changed.
      if (license.status !== statusBefore) await bumpListVersions(manager, [license], now);

      const data = toLicenseView(license, product, { withBlob: false });
      // One event and one audit entry per kind of change: suspending and editing fields is both.
      const { status: statusChange, ...fieldChanges } = auditChanges(before, data);
      const record = async (action: 'updated' | 'suspended' | 'reinstated', changed: AuditChanges) => {
        await recordEvent(manager, {
          type: `license.${action}` as const,
          orgId,
          data,
          occurredAt: now,
          serialStatus: toSerialStatus(license),
        });
        await recordAudit(manager, {
          orgId,
          action,
          resourceType: 'license',
          resourceId: id,
          changes: changed,
          occurredAt: now,
        });
      };
      const status: AuditChanges = statusChange ? { status: statusChange } : {};
      const suspended = statusBefore !== 'suspended' && license.status === 'suspended';
      const reinstated = statusBefore === 'suspended' && license.status !== 'suspended';
      if (suspended) await record('suspended', status);
      if (reinstated) await record('reinstated', status);
      const fieldsChanged = Object.entries(changes).some(
        ([field, value]) => field !== 'status' && value !== undefined,
      );
      // A status change that is neither (expired → active by a new valid_until) is part of the update.
      if (fieldsChanged)
        await record('updated', suspended || reinstated ? fieldChanges : { ...status, ...fieldChanges });
      return { license, product };
    });
    await this.writeThrough(license);
    return toLicenseView(license, product, { withBlob: true });
  }

  /**
   * Permanent. Revoking again is a success that keeps the first `revoked_at`, so clients can retry.
   * The new status is written through to the revocation cache before this answers: once DELETE has
   * returned, every check-revocation and sync sees it. If the cache cannot be reached the
   * revocation stands (and its event will reach the cache), but the caller gets a 503 and retries.
   */
  async revoke(orgId: string, id: string): Promise<MessageView> {
    const license = await this.dataSource.transaction(async (manager) => {
      const found = await manager.findOne(LicenseEntity, {
        where: { id, orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!found) throw DomainError.notFound('License', id);
      if (found.status === 'revoked') return found;
      const now = new Date();
      const product = await manager.findOneByOrFail(CatalogProductEntity, { id: found.productId });
      const before = toLicenseView(found, product, { withBlob: false });
      Object.assign(found, { status: 'revoked', revokedAt: now, updatedAt: now });
      await manager.update(LicenseEntity, { id }, { status: 'revoked', revokedAt: now, updatedAt: now });
      await bumpListVersions(manager, [found], now);
      const data = toLicenseView(found, product, { withBlob: false });
      await recordEvent(manager, {
        type: 'license.revoked',
        orgId,
        data,
        occurredAt: now,
        serialStatus: toSerialStatus(found),
      });
      await recordAudit(manager, {
        orgId,
        action: 'revoked',
        resourceType: 'license',
        resourceId: id,
        changes: auditChanges(before, data),
        occurredAt: now,
      });
      return found;
    });
    await this.writeThrough(license);
    return { message: `License ${id} revoked` };
  }

  private async writeThrough(license: LicenseEntity): Promise<void> {
    try {
      await this.bus.send(Messages.revocation.put, { statuses: [toSerialStatus(license)] });
    } catch {
      throw new DomainError(
        'unavailable',
        'The change is recorded but revocation checks do not show it yet; retry the request',
      );
    }
  }
}
