import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';

import { DataSource, EntityManager, FindOptionsWhere } from 'typeorm';
import {
  ActivationCreatedReply,
  ActivationListView,
  ActivationView,
  CheckoutMessage,
  CheckoutView,
  CreateActivationDto,
  ListActivationsQueryDto,
  MessageView,
  effectiveStatus,
  pageOf,
} from '@licensing/contracts';
import { pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import {
  OutboxRelay,
  auditChanges,
  auditRow,
  eventRow,
  outboxChannel,
  outboxTraceContext,
  recordAudit,
  recordEvent,
} from '@licensing/shared/events';
import { CredentialReach } from '@licensing/shared/logging';
import { Metrics } from '@licensing/shared/metrics';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { LicenseCheckoutService } from '../licenses/license-checkout.service';
import { LicenseSigner } from '../licenses/license-signer.service';
import { LicenseEntity } from '../licenses/license.entity';
import { loadEntitlements } from '../entitlements/license-entitlements';
import { toLicenseView } from '../licenses/license.mapper';
import { CredentialsService } from '../credentials/credentials.service';
import { newToken } from '../credentials/tokens';
import { ActivationEntity } from './activation.entity';
import { PolicyEntity } from '../policies/policy.entity';
import { termsOf } from '../policies/license-terms';
import {
  heartbeatDeadline,
  holdsPlace,
  isLapsed,
  offlineDeadline,
  toActivationView,
} from './activation.mapper';
import { ACTIVATION_WINDOW_MS, ensureFreeSeat, ensureUnderActivationCap, seatLimit } from './seats';
import { recordLicenseChange } from '../licenses/record-license-change';
import { LicenseRef, SeatStatements, seatStatements } from './seat-statements';

/** What takes a seat: the online route, or an air-gapped request whose file lives `ttlSeconds`. */
interface SeatRequest {
  dto: CreateActivationDto;
  reach: CredentialReach;
  offline?: { machineKey: string; ttlSeconds: number };
}

/**
 * Machine seats. Every activation that may take or change a seat first takes the license's row
 * lock, so counting the seats in use and taking one are a single step: 50 machines racing for 5
 * seats get exactly 5. Only a machine whose seat is already live is answered without it (`heldSeat`).
 * A license or machine token reaches its own license (or activation) only: anything else is
 * answered as if it did not exist, as for another organization.
 */
@Injectable()
export class ActivationsService {
  private readonly statements: SeatStatements;
  private readonly outboxChannel: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly signer: LicenseSigner,
    private readonly credentials: CredentialsService,
    private readonly checkouts: LicenseCheckoutService,
    private readonly relay: OutboxRelay,
  ) {
    this.statements = seatStatements(dataSource);
    this.outboxChannel = outboxChannel((dataSource.options as { schema?: string }).schema);
  }

  /**
   * Takes a seat. Asked with a license token, the answer carries a new machine token for the
   * activation; a machine token it had before stops working.
   */
  async create(
    orgId: string,
    dto: CreateActivationDto,
    reach: CredentialReach,
  ): Promise<ActivationCreatedReply> {
    const held = reach.kind === 'organization' ? await this.heldSeat(orgId, dto) : undefined;
    if (held) return { activation: toActivationView(held), created: false };
    const { reply, ended } = await this.dataSource.transaction(async (manager) => {
      const seat = await this.takeSeat(manager, orgId, { dto, reach }, new Date());
      const { activation, created } = seat;
      const view = toActivationView(activation);
      if (reach.kind !== 'license') return { reply: { activation: view, created }, ended: [seat.endedToken] };
      const { token, hash } = newToken('mt');
      await manager.update(ActivationEntity, { id: activation.id }, { tokenHash: hash });
      return {
        reply: { activation: view, created, machine_token: token },
        ended: [seat.endedToken, activation.tokenHash],
      };
    });
    for (const tokenHash of ended) this.credentials.tokenRevoked(tokenHash);
    if (reply.created) {
      this.wakeRelay();
      Metrics.activationsCreated.inc();
    }
    return reply;
  }

  /**
   * The machine's live seat, when asking again changes nothing: the license is active, its binding
   * accepts the machine (or it needs none), and the machine's activation has not lapsed. One read,
   * without a transaction or a lock: nothing is written, and the rows it reads are one snapshot, so
   * the answer is the one the locked path would give at that instant. Anything else (a new seat, a
   * lapsed one, a refusal, a first binding) is left to `takeSeat`, which decides it under the lock.
   * A license token never comes here: its activation always gets a new machine token.
   */
  private async heldSeat(orgId: string, dto: CreateActivationDto): Promise<ActivationEntity | undefined> {
    const row = await this.statements.heldSeat(orgId, licenseRef(dto), dto.fingerprint);
    const activation = row?.activation;
    if (!row || !activation) return undefined;
    const now = new Date();
    const license = { status: row.licenseStatus, validUntil: row.licenseValidUntil };
    if (effectiveStatus(license, now) !== 'active' || isLapsed(activation, now)) return undefined;
    const binding = row.hardwareBinding;
    const accepted = binding ? binding.fingerprint === dto.fingerprint : row.licenseType !== 'node_locked';
    return accepted ? activation : undefined;
  }

  /**
   * Gives the machine a seat, in the caller's transaction: the license's row lock, its status and
   * binding, the seats in use counted and one taken. Online and offline activations share it, so
   * they count against one limit under one lock. An offline seat lasts `offline.days` (never past
   * the license's end) instead of a heartbeat interval; asked again with the same machine key it
   * is renewed, and a fingerprint whose seat is held under another key (or online) is a conflict.
   * A new seat counts against the license's cap of activations in 24 h (`activationCap`).
   * `endedToken` is the machine token of a lapsed activation of the machine that this removed: the
   * caller evicts it from the gateways once the transaction has committed.
   */
  async takeSeat(
    manager: EntityManager,
    orgId: string,
    { dto, reach, offline }: SeatRequest,
    now: Date,
  ): Promise<{
    activation: ActivationEntity;
    created: boolean;
    license: LicenseEntity;
    product: CatalogProductEntity;
    endedToken: string | null;
  }> {
    const locked = await this.statements.lockSeat(
      manager,
      orgId,
      licenseRef(dto),
      reach.kind === 'organization' ? null : reach.license_id,
      dto.fingerprint,
      now,
      new Date(now.getTime() - ACTIVATION_WINDOW_MS),
    );
    // A license of another organization, or not the token's own, is not found either.
    if (!locked) throw DomainError.notFound('License', dto.license_id ?? dto.license_key);
    const { license, product, existing } = locked;
    if (effectiveStatus(license, now) !== 'active') {
      throw new DomainError(
        'license_not_active',
        `License ${license.id} is ${effectiveStatus(license, now)}`,
      );
    }
    const terms = termsOf(product, locked.policy);
    await this.checkBinding(manager, license, product, dto.fingerprint, reach, now);
    const expiresAt = offline
      ? offlineDeadline(offline.ttlSeconds, license.validUntil, now)
      : heartbeatDeadline(terms.heartbeatInterval, now);

    if (existing && !isLapsed(existing, now)) {
      if (!offline) return { activation: existing, created: false, license, product, endedToken: null };
      if (existing.machineKey !== offline.machineKey) {
        throw new DomainError(
          'conflict',
          `Fingerprint ${dto.fingerprint} already holds a seat of license ${license.id} under another key; ` +
            'release it (or delete the activation) first',
        );
      }
      existing.expiresAt = expiresAt;
      await manager.update(ActivationEntity, { id: existing.id }, { expiresAt });
      return { activation: existing, created: false, license, product, endedToken: null };
    }
    // In its policy's grace, the machine still holds its seat: activating again revives it.
    if (
      existing &&
      !offline &&
      existing.machineKey === null &&
      holdsPlace(existing, terms.graceSeconds, now)
    ) {
      Object.assign(existing, { lastHeartbeatAt: now, expiresAt });
      await manager.update(ActivationEntity, { id: existing.id }, { lastHeartbeatAt: now, expiresAt });
      return { activation: existing, created: false, license, product, endedToken: null };
    }
    if (existing) await this.expire(manager, existing, now);
    const endedToken = existing?.tokenHash ?? null;

    // The seats other machines hold (the machine's own row, lapsed, holds none) and the grants of
    // the cap's window were counted under the license's lock: concurrent activations count exactly.
    ensureFreeSeat(license.id, locked.seatsTaken, seatLimit(license, product, terms.overage));
    ensureUnderActivationCap(license, locked.granted, locked.oldestGrant, now);
    const activation = Object.assign(new ActivationEntity(), {
      id: randomUUID(),
      orgId,
      licenseId: license.id,
      fingerprint: dto.fingerprint,
      hostname: dto.hostname ?? null,
      platform: dto.platform ?? null,
      components: dto.components ?? {},
      createdAt: now,
      lastHeartbeatAt: now,
      expiresAt,
      machineKey: offline?.machineKey ?? null,
      tokenHash: null,
    });
    const view = toActivationView(activation);
    const { row: event } = eventRow({ type: 'activation.created', orgId, data: view, occurredAt: now });
    const audit = auditRow({
      orgId,
      action: 'created',
      resourceType: 'activation',
      resourceId: activation.id,
      changes: auditChanges(null, view),
      occurredAt: now,
    });
    // The activation, its grant, its event and its audit entry in one statement. This process's
    // relay is woken after the commit (`wakeRelay`) rather than notified: a notification makes
    // PostgreSQL serialize the commits of every notifying transaction. Without a relay running
    // here, the other processes' relays are notified.
    await this.statements.insertSeat(manager, {
      activation,
      grantId: randomUUID(),
      outbox: audit ? [event, audit] : [event],
      traceContext: outboxTraceContext(),
      notifyChannel: this.relay.isRunning ? null : this.outboxChannel,
    });
    return { activation, created: true, license, product, endedToken };
  }

  /** Once a new seat has committed: this process's relay publishes its event and audit entry now. */
  wakeRelay(): void {
    if (this.relay.isRunning) this.relay.signal();
  }

  /**
   * `license_id` and `license_key` narrow to one license each; given both, they must name the same
   * one. A license or machine token lists its own license's activations only.
   */
  async list(
    orgId: string,
    query: ListActivationsQueryDto,
    reach: CredentialReach,
  ): Promise<ActivationListView> {
    const licenseIds = new Set<string>();
    if (reach.kind !== 'organization') licenseIds.add(reach.license_id);
    if (query.license_id) licenseIds.add(query.license_id);
    if (query.license_key !== undefined) {
      const license = await this.dataSource
        .getRepository(LicenseEntity)
        .findOne({ select: { id: true }, where: { serial: query.license_key, orgId } });
      if (!license) return { activations: [], total: 0 };
      licenseIds.add(license.id);
    }
    if (licenseIds.size > 1) return { activations: [], total: 0 };
    const [licenseId] = licenseIds;
    const [activations, total] = await this.dataSource.getRepository(ActivationEntity).findAndCount({
      where: { orgId, ...(licenseId ? { licenseId } : {}) },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...pageWindow(pageOf(query)),
    });
    return { activations: activations.map(toActivationView), total };
  }

  /**
   * Moves the deadline of an online activation that still holds its place (by its policy's grace),
   * of an active license, in one statement (`SeatStatements.heartbeat`). When it moved nothing, the
   * row it found says why, in the order of the checks: gone or lapsed (404), offline (409), license
   * not active.
   */
  async heartbeat(orgId: string, id: string, reach: CredentialReach): Promise<ActivationView> {
    if (reach.kind === 'machine' && id !== reach.activation_id) throw DomainError.notFound('Activation', id);
    const now = new Date();
    const licenseId = reach.kind === 'organization' ? null : reach.license_id;
    const row = await this.statements.heartbeat(id, orgId, licenseId, now);
    if (!row) throw DomainError.notFound('Activation', id);
    if (row.activation) return toActivationView(row.activation);
    // Past its deadline and its policy's grace, an activation no longer holds its seat, which
    // another machine may have taken: it cannot be revived, the machine activates again.
    if (!holdsPlace(row, row.graceSeconds, now)) throw DomainError.notFound('Activation', id);
    if (row.machineKey !== null) {
      throw new DomainError(
        'conflict',
        `Activation ${id} is an offline activation: it lasts until its file expires and is renewed offline`,
      );
    }
    const status = effectiveStatus({ status: row.licenseStatus, validUntil: row.licenseValidUntil }, now);
    if (status !== 'active')
      throw new DomainError('license_not_active', `License ${row.licenseId} is ${status}`);
    // Found in time, but it lapsed (or went) before the update held its lock.
    throw DomainError.notFound('Activation', id);
  }

  /**
   * A checkout of the activation's license, bound to its fingerprint. A lapsed activation holds no
   * seat: it is answered as one that does not exist, as heartbeat answers it.
   */
  async checkout(
    orgId: string,
    { id, ttl_seconds }: CheckoutMessage,
    reach: CredentialReach,
  ): Promise<CheckoutView> {
    const activation = await findReachable(this.dataSource.manager, orgId, id, reach, false);
    if (!activation || isLapsed(activation, new Date())) throw DomainError.notFound('Activation', id);
    return this.checkouts.checkout(orgId, activation.licenseId, ttl_seconds, activation.fingerprint);
  }

  /**
   * Frees the seat. An air-gapped seat is freed only by its signed release, or by an admin key: its
   * activation file stays valid offline until it expires, so freeing the seat by id alone would
   * let a copied file's holder multiply the seat.
   */
  async delete(orgId: string, id: string, reach: CredentialReach): Promise<MessageView> {
    const { answer, tokenHash } = await this.dataSource.transaction(async (manager) => {
      const activation = await lockReachable(manager, orgId, id, reach);
      if (!activation) throw DomainError.notFound('Activation', id);
      if (activation.machineKey !== null && !(reach.kind === 'organization' && reach.admin)) {
        throw new DomainError(
          'offline_activation',
          `Activation ${id} is an air-gapped seat: it is released by its signed release file ` +
            '(POST /activations/offline/release), or by an admin key',
        );
      }
      return { answer: await this.remove(manager, activation), tokenHash: activation.tokenHash };
    });
    this.credentials.tokenRevoked(tokenHash);
    return answer;
  }

  /** Deletes a locked activation, freeing its seat, and says so. */
  async remove(manager: EntityManager, activation: ActivationEntity): Promise<MessageView> {
    const { id, orgId } = activation;
    await manager.delete(ActivationEntity, { id });
    const view = toActivationView(activation);
    await recordEvent(manager, { type: 'activation.deleted', orgId, data: view });
    await recordAudit(manager, {
      orgId,
      action: 'deleted',
      resourceType: 'activation',
      resourceId: id,
      changes: auditChanges(view, null),
    });
    return { message: `Activation ${id} deleted; its seat is free` };
  }

  /** Removes a lapsed activation and says so (the sweeper does the same for the ones nobody touches). */
  async expire(manager: EntityManager, activation: ActivationEntity, now: Date): Promise<void> {
    const { affected } = await manager.delete(ActivationEntity, { id: activation.id });
    if (!affected) return; // removed meanwhile by someone else, who said so
    await recordEvent(manager, {
      type: 'activation.expired',
      orgId: activation.orgId,
      data: toActivationView(activation),
      occurredAt: now,
    });
  }

  /**
   * A bound license accepts only its fingerprint; a node-locked license without a binding is bound
   * to the first machine that activates it (and its file is signed again with the binding). Binding
   * is for the license's own token or an admin key: a `client` key is shared by a whole fleet, and
   * whoever holds it could otherwise bind a stranger's license to their machine for good.
   */
  private async checkBinding(
    manager: EntityManager,
    license: LicenseEntity,
    product: CatalogProductEntity,
    fingerprint: string,
    reach: CredentialReach,
    now: Date,
  ): Promise<void> {
    if (license.hardwareBinding) {
      if (license.hardwareBinding.fingerprint !== fingerprint) {
        throw new DomainError('fingerprint_mismatch', `License ${license.id} is bound to another machine`);
      }
      return;
    }
    if (license.licenseType !== 'node_locked') return;
    if (reach.kind !== 'license' && !(reach.kind === 'organization' && reach.admin)) {
      throw new DomainError(
        'forbidden',
        `License ${license.id} is node-locked and not bound yet: its first activation needs the ` +
          "license's own token or an admin key",
      );
    }
    await loadEntitlements(manager, [license]);
    const before = toLicenseView(license, product, { withBlob: false });
    license.hardwareBinding = { fingerprint };
    license.updatedAt = now;
    await this.signer.sign(manager, license, product, now);
    await manager.save(license);
    const data = toLicenseView(license, product, { withBlob: false });
    await recordLicenseChange(manager, license, {
      type: 'license.updated',
      action: 'updated',
      before,
      data,
      now,
    });
  }
}

/**
 * The activation `id`, locked, if the credential reaches it (through its license for a license
 * token, itself for a machine token); null otherwise, as for an id that does not exist.
 */
export const lockReachable = (
  manager: EntityManager,
  orgId: string,
  id: string,
  reach: CredentialReach,
): Promise<ActivationEntity | null> => findReachable(manager, orgId, id, reach, true);

/** The activation `id` if the credential reaches it, locked for writing when `lock` is set. */
async function findReachable(
  manager: EntityManager,
  orgId: string,
  id: string,
  reach: CredentialReach,
  lock: boolean,
): Promise<ActivationEntity | null> {
  if (reach.kind === 'machine' && id !== reach.activation_id) return null;
  const where: FindOptionsWhere<ActivationEntity> =
    reach.kind === 'license' ? { id, orgId, licenseId: reach.license_id } : { id, orgId };
  return manager.findOne(ActivationEntity, lock ? { where, lock: { mode: 'pessimistic_write' } } : { where });
}

/** The license a request names: by id when it gives one, else by key (as the locked path always read it). */
function licenseRef(dto: CreateActivationDto): LicenseRef {
  return dto.license_id !== undefined ? { id: dto.license_id } : { serial: dto.license_key! };
}

/** The license's policy, as it is now; null for a license without one. */
export async function policyOf(
  manager: EntityManager,
  license: Pick<LicenseEntity, 'policyId'>,
): Promise<PolicyEntity | null> {
  return license.policyId === null ? null : manager.findOneBy(PolicyEntity, { id: license.policyId });
}
