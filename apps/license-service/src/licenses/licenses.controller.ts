import {
  CheckoutMessage,
  CheckoutView,
  CreateLicenseDto,
  IdDto,
  LicenseListView,
  LicenseView,
  ListLicensesQueryDto,
  MessageView,
  SerialStatus,
  SerialStatusesRequest,
  Messages,
  UpdateLicenseMessage,
  UsageIncrementMessage,
  LicenseUsesView,
  VerifyLicenseDto,
  VerifyResultView,
} from '@licensing/contracts';
import { CredentialReach } from '@licensing/shared/logging';
import { BusController, BusData, BusOrg, BusReach, Handles } from '@licensing/shared/messaging';
import { LicenseCheckoutService } from './license-checkout.service';
import { LicenseUsageService } from './license-usage.service';
import { LicenseVerifier } from './license-verifier.service';
import { LicensesService } from './licenses.service';
import { SerialStatusesService } from './serial-statuses.service';

@BusController()
export class LicensesController {
  constructor(
    private readonly licenses: LicensesService,
    private readonly verifier: LicenseVerifier,
    private readonly serialStatuses: SerialStatusesService,
    private readonly usage: LicenseUsageService,
    private readonly checkouts: LicenseCheckoutService,
  ) {}

  @Handles(Messages.license.create)
  create(@BusOrg() orgId: string, @BusData() dto: CreateLicenseDto): Promise<LicenseView> {
    return this.licenses.create(orgId, dto);
  }

  @Handles(Messages.license.list)
  list(@BusOrg() orgId: string, @BusData() query: ListLicensesQueryDto): Promise<LicenseListView> {
    return this.licenses.list(orgId, query);
  }

  @Handles(Messages.license.get)
  get(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<LicenseView> {
    return this.licenses.get(orgId, id);
  }

  @Handles(Messages.license.update)
  update(@BusOrg() orgId: string, @BusData() { id, changes }: UpdateLicenseMessage): Promise<LicenseView> {
    return this.licenses.update(orgId, id, changes);
  }

  @Handles(Messages.license.checkIn)
  checkIn(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<LicenseView> {
    return this.licenses.checkIn(orgId, id);
  }

  @Handles(Messages.license.revoke)
  revoke(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<MessageView> {
    return this.licenses.revoke(orgId, id);
  }

  /** Internal: not on behalf of an organization, so no @BusOrg; the caller filters by org. */
  @Handles(Messages.license.statuses)
  statuses(@BusData() { serials }: SerialStatusesRequest): Promise<SerialStatus[]> {
    return this.serialStatuses.lookup(serials);
  }

  @Handles(Messages.license.verify)
  verify(@BusOrg() orgId: string, @BusData() dto: VerifyLicenseDto): Promise<VerifyResultView> {
    return this.verifier.verify(orgId, dto);
  }

  @Handles(Messages.license.incrementUsage)
  incrementUsage(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() { id, increment }: UsageIncrementMessage,
  ): Promise<LicenseUsesView> {
    return this.usage.increment(orgId, id, increment ?? 1, reach);
  }

  @Handles(Messages.license.resetUsage)
  resetUsage(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<LicenseUsesView> {
    return this.usage.reset(orgId, id);
  }

  @Handles(Messages.license.checkout)
  checkout(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() message: CheckoutMessage,
  ): Promise<CheckoutView> {
    return this.checkouts.checkoutLicense(orgId, message, reach);
  }
}
