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
  effectiveStatus,
  eventSubject,
  pageOf,
} from '@licensing/contracts';
import { generateSerial } from '@licensing/license-format';
import { isUniqueViolation, pageWindow, preparedStatement } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { Metrics } from '@licensing/shared/metrics';
import {
  OutboxEventEntity,
  OutboxRelay,
  OutboxRow,
  auditChanges,
  auditRow,
  eventRow,
  outboxChannel,
  outboxTraceContext,
  recordEvent,
} from '@licensing/shared/events';
import { BusClient } from '@licensing/shared/messaging';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { CatalogService } from '../catalog/catalog.service';
import { loadEntitlements } from '../entitlements/license-entitlements';
import { loadPolicyEntitlements } from '../policies/policy-entitlements';
import { PolicyEntity } from '../policies/policy.entity';
import { bumpListVersions } from '../revocation-lists/list-versions';
import { INHERITABLE_LIMITS, InheritableLimit, LicenseEntity } from './license.entity';
import { LicenseSigner } from './license-signer.service';
import { applyChanges } from './license-changes';
import { toLicenseView } from './license.mapper';
import { toSerialStatus } from './serial-statuses.service';
import { recordLicenseChange } from './record-license-change';

const DAY_MS = 86_400_000;
/**
 * A create is tried again when its serial collides (80 random bits: astronomically rare, but the
 * unique index decides) or its product changed after it was read.
 */
const ISSUE_ATTEMPTS = 3;

/** Issues, lists, reads and revokes licenses. Verification lives in LicenseVerifier. */
@Injectable()
export class LicensesService {
  /** One round trip per license created: see `issue`. Answers one row when it inserted the license. */
  private readonly issueStatement: (values: unknown[]) => Promise<unknown[]>;
  private readonly outboxChannel: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly catalog: CatalogService,
    private readonly signer: LicenseSigner,
    private readonly bus: BusClient,
    private readonly relay: OutboxRelay,
  ) {
    const table = (entity: new () => object) => dataSource.getMetadata(entity).tablePath;
    this.outboxChannel = outboxChannel((dataSource.options as { schema?: string }).schema);
    // The product version the license was made from ($3, $4), locked FOR SHARE, and so is the
    // policy version ($25, $26) when there is one: a policy PATCH waits for this license and then
    // updates it too, or wins and this statement inserts nothing. Then the license, then
    // its event and audit entry (none when $19 is null) in the outbox, in that order; the outbox's
    // notification ($24), delivered at commit. Nothing is written unless the product row matched.
    this.issueStatement = preparedStatement(
      dataSource,
      'license-create',
      `WITH product AS (
         SELECT id FROM ${table(CatalogProductEntity)}
          WHERE id = $2::uuid AND org_id = $1::uuid AND retired_at IS NULL
            AND updated_at = $3::timestamptz AND key_pair_id = $4::uuid
            FOR SHARE
       ), policy AS (
         SELECT id FROM ${table(PolicyEntity)}
          WHERE id = $25::uuid AND org_id = $1::uuid AND updated_at = $26::timestamptz
            FOR SHARE
       ), license AS (
         INSERT INTO ${table(LicenseEntity)}
                (id, org_id, product_id, serial, license_type, customer_id, customer_email, status,
                 valid_from, valid_until, features, max_seats, hardware_binding, key_pair_id, jws,
                 created_at, updated_at, policy_id, overridden, max_uses, uses_period_start)
         SELECT $5::uuid, $1::uuid, product.id, $6::varchar, $7::varchar, $8::varchar, $9::varchar, 'active',
                $10::timestamptz, $11::timestamptz, $12::text[], $13::integer, $14::jsonb, $4::uuid, $15::text,
                $10::timestamptz, $10::timestamptz, $25::uuid, $27::text[], $28::bigint, $10::timestamptz
           FROM product
          WHERE $25::uuid IS NULL OR EXISTS (SELECT 1 FROM policy)
         RETURNING 1
       ), outbox AS (
         INSERT INTO ${table(OutboxEventEntity)} (id, subject, payload, trace_context, created_at)
         SELECT row.id, row.subject, row.payload, $22::text, now()
           FROM license,
                (VALUES (1, $16::uuid, $17::varchar, $18::text), (2, $19::uuid, $20::varchar, $21::text))
                  AS row(n, id, subject, payload)
          WHERE row.id IS NOT NULL
          ORDER BY row.n
         RETURNING 1
       )
       SELECT CASE WHEN $24::boolean THEN pg_notify($23, '') END FROM license`,
    );
  }

  async create(orgId: string, dto: CreateLicenseDto): Promise<LicenseView> {
    for (let attempt = 1; ; attempt++) {
      try {
        const license = await this.issue(orgId, dto, attempt > 1);
        if (license) {
          Metrics.licensesCreated.inc();
          return license;
        }
        // The product changed (or went) after the version this license was made from was read.
        if (attempt === ISSUE_ATTEMPTS) {
          throw DomainError.conflict(
            `Product ${dto.product_id ?? ''} or policy ${dto.policy_id ?? ''} changed while the license was created; retry`,
          );
        }
      } catch (error) {
        if (!isUniqueViolation(error, 'uq_licenses_serial') || attempt === ISSUE_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * Makes the license from a version of its product (the catalog's, held in memory unless `fresh`),
   * signs it, and writes it with its `license.created` event and its audit entry in one statement
   * (`issueStatement`) that inserts them only if that version is still the product's live one, with
   * the product row locked FOR SHARE until the statement commits: a product delete, which locks it
   * for update, waits and then sees this license, or wins and this statement inserts nothing.
   * Undefined when it inserted nothing: the caller reads the product again.
   */
  private async issue(
    orgId: string,
    dto: CreateLicenseDto,
    fresh: boolean,
  ): Promise<LicenseView | undefined> {
    const policy = dto.policy_id === undefined ? null : await this.policyOf(orgId, dto.policy_id);
    if (policy && dto.product_id !== undefined && dto.product_id !== policy.productId) {
      throw new DomainError(
        'policy_product_mismatch',
        `Policy ${policy.id} is a policy of product ${policy.productId}, not of ${dto.product_id}`,
      );
    }
    const product = await this.catalog.forIssue(orgId, policy?.productId ?? dto.product_id!, fresh);
    const licenseType = dto.license_type ?? policy?.licenseType ?? 'subscription';
    if (licenseType === 'node_locked' && dto.max_seats !== undefined && dto.max_seats !== 1) {
      throw DomainError.validation([
        { field: 'max_seats', message: 'a node_locked license has exactly one seat' },
      ]);
    }
    const now = new Date();
    // A policy's duration_days (null: perpetual) replaces the product's default validity.
    const defaultDays = policy ? (policy.durationDays ?? 0) : product.defaultValidDays;
    const validDays = licenseType === 'perpetual' ? 0 : (dto.valid_days ?? defaultDays);
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
      maxSeats: licenseType === 'node_locked' ? 1 : (dto.max_seats ?? policy?.maxMachines ?? 1),
      hardwareBinding: dto.hardware_binding ? { fingerprint: dto.hardware_binding.fingerprint } : null,
      keyPairId: product.keyPairId,
      createdAt: now,
      updatedAt: now,
      revokedAt: null,
      listVersion: null,
      listChangedAt: null,
      uses: 0,
      maxUses: dto.max_uses !== undefined ? dto.max_uses : (policy?.maxUses ?? null),
      // A new license holds its policy's entitlements; its own are attached to it afterwards.
      entitlements: policy?.entitlements ?? [],
      policyId: policy?.id ?? null,
      // A policy license follows its policy's max_machines and max_uses unless the request set them.
      overridden: policy ? overriddenBy(dto) : [],
      lastCheckInAt: null,
      usesPeriodStart: now,
    });
    await this.signer.sign(this.dataSource.manager, license, product, now);
    const data = toLicenseView(license, product, { withBlob: false });
    const { row: event } = eventRow({
      type: 'license.created',
      orgId,
      data,
      occurredAt: now,
      serialStatus: toSerialStatus(license),
    });
    const audit = auditRow({
      orgId,
      action: 'created',
      resourceType: 'license',
      resourceId: license.id,
      changes: auditChanges(null, data),
      occurredAt: now,
    });
    const relayHere = this.relay.isRunning;
    const written = await this.issueStatement([
      orgId,
      product.id,
      product.updatedAt,
      license.keyPairId,
      license.id,
      license.serial,
      license.licenseType,
      license.customerId,
      license.customerEmail,
      now,
      license.validUntil,
      license.features,
      license.maxSeats,
      license.hardwareBinding && JSON.stringify(license.hardwareBinding),
      license.jws,
      event.id,
      event.subject,
      event.payload,
      audit?.id ?? null,
      audit?.subject ?? null,
      audit?.payload ?? null,
      outboxTraceContext(),
      this.outboxChannel,
      // This process's relay, once told, drains the rows: no notification, whose commit lock would
      // serialize every create's commit. Without a running relay here, the others are notified.
      !relayHere,
      license.policyId,
      policy?.updatedAt ?? null,
      license.overridden,
      license.maxUses,
    ]);
    if (written.length === 0) return undefined;
    if (relayHere) this.relay.signal();
    return toLicenseView(license, product, { withBlob: true });
  }

  private async policyOf(orgId: string, id: string): Promise<PolicyEntity> {
    const policy = await this.dataSource.getRepository(PolicyEntity).findOneBy({ id, orgId });
    if (!policy) throw DomainError.notFound('Policy', id);
    await loadPolicyEntitlements(this.dataSource.manager, [policy]);
    return policy;
  }

  /**
   * Records that the license's application checked in now. A revoked, suspended or expired license
   * cannot check in. The license file is not signed again: nothing in it changed.
   */
  async checkIn(orgId: string, id: string): Promise<LicenseView> {
    return this.dataSource.transaction(async (manager) => {
      const license = await manager.findOne(LicenseEntity, {
        where: { id, orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!license) throw DomainError.notFound('License', id);
      const now = new Date();
      const status = effectiveStatus(license, now);
      if (status !== 'active') throw new DomainError('license_not_active', `License ${id} is ${status}`);
      license.lastCheckInAt = now;
      await manager.update(LicenseEntity, { id }, { lastCheckInAt: now });
      const product = await manager.findOneByOrFail(CatalogProductEntity, { id: license.productId });
      await recordEvent(manager, {
        type: 'license.checked_in',
        orgId,
        data: toLicenseView(license, product, { withBlob: false }),
        occurredAt: now,
        serialStatus: toSerialStatus(license),
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
    await loadEntitlements(this.dataSource.manager, licenses);
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
    await loadEntitlements(this.dataSource.manager, [license]);
    return toLicenseView(license, license.product!, { withBlob: true });
  }

  /**
   * PATCH: the changed license is signed again, its events recorded with the change, and its new
   * status written through to the revocation cache before this answers.
   */
  async update(orgId: string, id: string, changes: UpdateLicenseDto): Promise<LicenseView> {
    const events: OutboxRow[] = [];
    const { license, product } = await this.dataSource.transaction(async (manager) => {
      const license = await manager.findOne(LicenseEntity, {
        where: { id, orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!license) throw DomainError.notFound('License', id);
      if (license.status === 'revoked')
        throw DomainError.conflict(`License ${id} is revoked and cannot change`);
      const product = await manager.findOneByOrFail(CatalogProductEntity, { id: license.productId });
      await loadEntitlements(manager, [license]);
      const now = new Date();
      const statusBefore = license.status;
      const before = toLicenseView(license, product, { withBlob: false });
      applyChanges(license, changes, now);
      // A policy license that sets its own limit no longer follows its policy's.
      if (license.policyId) {
        const set = overriddenBy(changes).filter((limit) => !license.overridden.includes(limit));
        if (set.length > 0) license.overridden = [...license.overridden, ...set];
      }
      license.updatedAt = now;
      await this.signer.sign(manager, license, product, now);
      await manager.save(license);
      // Suspended, reinstated, or an expired license extended: its revocation-list entry changed.
      if (license.status !== statusBefore) await bumpListVersions(manager, [license], now);

      const data = toLicenseView(license, product, { withBlob: false });
      // One event and one audit entry per kind of change: suspending and editing fields is both.
      const { status: statusChange, ...fieldChanges } = auditChanges(before, data);
      const record = async (action: 'updated' | 'suspended' | 'reinstated', changes: AuditChanges) =>
        events.push(
          await recordLicenseChange(manager, license, {
            type: `license.${action}`,
            action,
            before,
            data,
            now,
            changes,
          }),
        );
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
    await this.writeThrough(license, events);
    return toLicenseView(license, product, { withBlob: true });
  }

  /**
   * Permanent. Revoking again is a success that keeps the first `revoked_at`, so clients can retry.
   * The new status is written through to the revocation cache before this answers: once DELETE has
   * returned, every check-revocation and sync sees it, and its event is in the stream. If either
   * cannot be reached the revocation stands (and its event will follow), but the caller gets a 503
   * and retries.
   */
  async revoke(orgId: string, id: string): Promise<MessageView> {
    let event: OutboxRow | undefined;
    const license = await this.dataSource.transaction(async (manager) => {
      const found = await manager.findOne(LicenseEntity, {
        where: { id, orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!found) throw DomainError.notFound('License', id);
      if (found.status === 'revoked') return found;
      const now = new Date();
      const product = await manager.findOneByOrFail(CatalogProductEntity, { id: found.productId });
      await loadEntitlements(manager, [found]);
      const before = toLicenseView(found, product, { withBlob: false });
      Object.assign(found, { status: 'revoked', revokedAt: now, updatedAt: now });
      await manager.update(LicenseEntity, { id }, { status: 'revoked', revokedAt: now, updatedAt: now });
      await bumpListVersions(manager, [found], now);
      const data = toLicenseView(found, product, { withBlob: false });
      event = await recordLicenseChange(manager, found, {
        type: 'license.revoked',
        action: 'revoked',
        before,
        data,
        now,
      });
      return found;
    });
    // Revoking again (a retry after a 503): the first revoke's event, if the relay has not published it.
    const events = event
      ? [event]
      : await this.relay.pending(eventSubject(orgId, 'license.revoked'), `"id":"${license.id}"`);
    await this.writeThrough(license, events);
    return { message: `License ${id} revoked` };
  }

  /**
   * Before a status change answers, its events are in JetStream (published here, ahead of the
   * outbox relay, with no lock to wait for) and its status in the revocation cache. The event is
   * a second copy of the change: after an asynchronous failover loses the database's last
   * commits, the event replay writes the change back. Either step failing is a 503: the change
   * stands, and a retry (revoking again, or the same PATCH) completes both.
   */
  private async writeThrough(license: LicenseEntity, events: readonly OutboxRow[]): Promise<void> {
    try {
      await Promise.all([
        this.relay.publishNow(events),
        this.bus.send(Messages.revocation.put, { statuses: [toSerialStatus(license)] }),
      ]);
    } catch {
      throw new DomainError(
        'unavailable',
        'The change is recorded but not yet published to revocation checks; retry the request',
      );
    }
  }
}

/** The inheritable limits a create or a PATCH sets itself. */
function overriddenBy(dto: { max_seats?: number; max_uses?: number | null }): InheritableLimit[] {
  return INHERITABLE_LIMITS.filter((limit) => dto[limit] !== undefined);
}
