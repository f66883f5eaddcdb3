import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Broadcasts, OrganizationView, UpdateOrganizationDto } from '@licensing/contracts';
import { DomainError } from '@licensing/shared/errors';
import { auditChanges } from '@licensing/shared/events';
import { BusClient } from '@licensing/shared/messaging';
import { AuditEventsService } from '../audit/audit-events.service';
import { OrganizationLimitsService } from './organization-limits.service';
import { OrganizationEntity } from './organization.entity';

/**
 * The settings an admin key changes for its own organization. A change is audited, and broadcast
 * so that every gateway drops what it cached of the organization.
 */
@Injectable()
export class OrganizationSettingsService implements OnApplicationBootstrap {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditEventsService,
    private readonly bus: BusClient,
    private readonly policies: OrganizationLimitsService,
  ) {}

  onApplicationBootstrap(): void {
    this.bus.subscribe(Broadcasts.organizationChanged, ({ org_id }) => this.policies.forget(org_id));
  }

  async current(orgId: string): Promise<OrganizationView> {
    const organization = await this.dataSource.getRepository(OrganizationEntity).findOneBy({ id: orgId });
    if (!organization) throw DomainError.notFound('Organization', orgId);
    return toOrganizationView(organization);
  }

  async update(orgId: string, changes: UpdateOrganizationDto): Promise<OrganizationView> {
    const view = await this.dataSource.transaction(async (manager) => {
      const repository = manager.getRepository(OrganizationEntity);
      const organization = await repository.findOne({
        where: { id: orgId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!organization) throw DomainError.notFound('Organization', orgId);
      const before = toOrganizationView(organization);
      organization.clientKeysLicenseActions =
        changes.client_keys_license_actions ?? organization.clientKeysLicenseActions;
      organization.checkoutTtlSeconds = changes.checkout_ttl_seconds ?? organization.checkoutTtlSeconds;
      await repository.update(
        { id: orgId },
        {
          clientKeysLicenseActions: organization.clientKeysLicenseActions,
          checkoutTtlSeconds: organization.checkoutTtlSeconds,
        },
      );
      const after = toOrganizationView(organization);
      await this.audit.record(manager, {
        orgId,
        action: 'updated',
        resourceType: 'organization',
        resourceId: orgId,
        changes: auditChanges(before, after),
      });
      return after;
    });
    this.policies.forget(orgId);
    this.bus.publish(Broadcasts.organizationChanged, { org_id: orgId });
    return view;
  }
}

function toOrganizationView(organization: OrganizationEntity): OrganizationView {
  return {
    id: organization.id,
    name: organization.name,
    client_keys_license_actions: organization.clientKeysLicenseActions,
    checkout_ttl_seconds: organization.checkoutTtlSeconds,
    created_at: organization.createdAt.toISOString(),
  };
}
