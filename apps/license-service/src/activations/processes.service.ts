import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull, MoreThan } from 'typeorm';
import {
  CreateProcessMessage,
  ListProcessesMessage,
  MessageView,
  ProcessCreatedReply,
  ProcessListView,
  ProcessRefDto,
  ProcessView,
  effectiveStatus,
  pageOf,
} from '@licensing/contracts';
import { pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { CredentialReach } from '@licensing/shared/logging';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { LicenseEntity } from '../licenses/license.entity';
import { LicenseTerms, termsOf } from '../policies/license-terms';
import { ActivationEntity } from './activation.entity';
import { heartbeatDeadline, holdsPlace } from './activation.mapper';
import { lockReachable, policyOf } from './activations.service';
import { ProcessEntity } from './process.entity';

/**
 * The processes of one machine. Every create first takes its activation's row lock, so counting
 * the processes that hold a slot and taking one are a single step: 50 processes racing for 5
 * slots get exactly 5. A process lapses like its machine, by the policy's heartbeat interval and
 * grace. A license or machine token reaches the processes of its own activations only.
 */
@Injectable()
export class ProcessesService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  create(orgId: string, message: CreateProcessMessage, reach: CredentialReach): Promise<ProcessCreatedReply> {
    return this.dataSource.transaction(async (manager) => {
      const now = new Date();
      const { activation, terms } = await this.liveActivation(
        manager,
        orgId,
        message.activation_id,
        reach,
        now,
      );
      const expiresAt = heartbeatDeadline(terms.heartbeatInterval, now);
      const existing = await manager.findOneBy(ProcessEntity, {
        activationId: activation.id,
        pid: message.pid,
      });
      if (existing && holdsPlace(existing, terms.graceSeconds, now)) {
        Object.assign(existing, { lastHeartbeatAt: now, expiresAt });
        await manager.update(ProcessEntity, { id: existing.id }, { lastHeartbeatAt: now, expiresAt });
        return { process: toProcessView(existing), created: false };
      }
      if (existing) await manager.delete(ProcessEntity, { id: existing.id });
      if (terms.maxProcesses !== null) {
        const since = new Date(now.getTime() - terms.graceSeconds * 1000);
        const inUse = await manager.count(ProcessEntity, {
          where: [
            { activationId: activation.id, expiresAt: IsNull() },
            { activationId: activation.id, expiresAt: MoreThan(since) },
          ],
        });
        if (inUse >= terms.maxProcesses) {
          throw new DomainError(
            'process_limit_reached',
            `Activation ${activation.id} runs all ${terms.maxProcesses} processes its policy allows`,
          );
        }
      }
      const process = Object.assign(new ProcessEntity(), {
        id: randomUUID(),
        orgId,
        activationId: activation.id,
        pid: message.pid,
        createdAt: now,
        lastHeartbeatAt: now,
        expiresAt,
      });
      await manager.insert(ProcessEntity, process);
      return { process: toProcessView(process), created: true };
    });
  }

  async list(orgId: string, query: ListProcessesMessage, reach: CredentialReach): Promise<ProcessListView> {
    return this.dataSource.transaction(async (manager) => {
      const activation = await lockReachable(manager, orgId, query.activation_id, reach);
      if (!activation) throw DomainError.notFound('Activation', query.activation_id);
      const [processes, total] = await manager.findAndCount(ProcessEntity, {
        where: { activationId: activation.id },
        order: { createdAt: 'DESC', id: 'DESC' },
        ...pageWindow(pageOf(query)),
      });
      return { processes: processes.map(toProcessView), total };
    });
  }

  heartbeat(orgId: string, ref: ProcessRefDto, reach: CredentialReach): Promise<ProcessView> {
    return this.dataSource.transaction(async (manager) => {
      const now = new Date();
      const { activation, terms } = await this.liveActivation(manager, orgId, ref.activation_id, reach, now);
      const process = await manager.findOne(ProcessEntity, {
        where: { id: ref.id, activationId: activation.id },
        lock: { mode: 'pessimistic_write' },
      });
      // Past its deadline and the grace, its slot may be taken: the process starts again.
      if (!process || !holdsPlace(process, terms.graceSeconds, now))
        throw DomainError.notFound('Process', ref.id);
      process.lastHeartbeatAt = now;
      process.expiresAt = heartbeatDeadline(terms.heartbeatInterval, now);
      await manager.update(
        ProcessEntity,
        { id: process.id },
        { lastHeartbeatAt: now, expiresAt: process.expiresAt },
      );
      return toProcessView(process);
    });
  }

  delete(orgId: string, ref: ProcessRefDto, reach: CredentialReach): Promise<MessageView> {
    return this.dataSource.transaction(async (manager) => {
      const activation = await lockReachable(manager, orgId, ref.activation_id, reach);
      if (!activation) throw DomainError.notFound('Activation', ref.activation_id);
      const { affected } = await manager.delete(ProcessEntity, { id: ref.id, activationId: activation.id });
      if (!affected) throw DomainError.notFound('Process', ref.id);
      return { message: `Process ${ref.id} deleted; its slot is free` };
    });
  }

  /**
   * The activation, locked, if the credential reaches it and it still holds its seat, with the
   * terms of its license, which must be active.
   */
  private async liveActivation(
    manager: EntityManager,
    orgId: string,
    id: string,
    reach: CredentialReach,
    now: Date,
  ): Promise<{ activation: ActivationEntity; terms: LicenseTerms }> {
    const activation = await lockReachable(manager, orgId, id, reach);
    if (!activation) throw DomainError.notFound('Activation', id);
    const license = await manager.findOneByOrFail(LicenseEntity, { id: activation.licenseId });
    const status = effectiveStatus(license, now);
    if (status !== 'active')
      throw new DomainError('license_not_active', `License ${license.id} is ${status}`);
    const product = await manager.findOneByOrFail(CatalogProductEntity, { id: license.productId });
    const terms = termsOf(product, await policyOf(manager, license));
    if (!holdsPlace(activation, terms.graceSeconds, now)) throw DomainError.notFound('Activation', id);
    return { activation, terms };
  }
}

function toProcessView(process: ProcessEntity): ProcessView {
  return {
    id: process.id,
    activation_id: process.activationId,
    pid: process.pid,
    created_at: process.createdAt.toISOString(),
    last_heartbeat_at: process.lastHeartbeatAt.toISOString(),
    expires_at: process.expiresAt?.toISOString() ?? null,
  };
}
