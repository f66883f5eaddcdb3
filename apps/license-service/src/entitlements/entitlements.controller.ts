import {
  CreateEntitlementDto,
  EntitlementListView,
  EntitlementView,
  IdDto,
  LicenseEntitlementsMessage,
  LicenseView,
  MessageView,
  Messages,
  PageQueryDto,
  UpdateEntitlementMessage,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { EntitlementsService } from './entitlements.service';
import { LicenseEntitlementsService } from './license-entitlements.service';

@BusController()
export class EntitlementsController {
  constructor(
    private readonly entitlements: EntitlementsService,
    private readonly licenseEntitlements: LicenseEntitlementsService,
  ) {}

  @Handles(Messages.entitlement.create)
  create(@BusOrg() orgId: string, @BusData() dto: CreateEntitlementDto): Promise<EntitlementView> {
    return this.entitlements.create(orgId, dto);
  }

  @Handles(Messages.entitlement.list)
  list(@BusOrg() orgId: string, @BusData() query: PageQueryDto): Promise<EntitlementListView> {
    return this.entitlements.list(orgId, query);
  }

  @Handles(Messages.entitlement.get)
  get(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<EntitlementView> {
    return this.entitlements.get(orgId, id);
  }

  @Handles(Messages.entitlement.update)
  update(
    @BusOrg() orgId: string,
    @BusData() { id, changes }: UpdateEntitlementMessage,
  ): Promise<EntitlementView> {
    return this.entitlements.update(orgId, id, changes);
  }

  @Handles(Messages.entitlement.delete)
  delete(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<MessageView> {
    return this.entitlements.delete(orgId, id);
  }

  @Handles(Messages.license.attachEntitlements)
  attach(
    @BusOrg() orgId: string,
    @BusData() { id, codes }: LicenseEntitlementsMessage,
  ): Promise<LicenseView> {
    return this.licenseEntitlements.attach(orgId, id, codes);
  }

  @Handles(Messages.license.detachEntitlements)
  detach(
    @BusOrg() orgId: string,
    @BusData() { id, codes }: LicenseEntitlementsMessage,
  ): Promise<LicenseView> {
    return this.licenseEntitlements.detach(orgId, id, codes);
  }
}
