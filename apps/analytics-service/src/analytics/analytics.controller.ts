import {
  ActiveQueryDto,
  ActiveView,
  AnalyticsRangeQueryDto,
  FeaturesView,
  LicenseUsageRequest,
  LicenseUsageView,
  Messages,
  UsageQueryDto,
  UsageView,
  VersionsView,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { AnalyticsService } from './analytics.service';

@BusController()
export class AnalyticsController {
  constructor(private readonly analytics: AnalyticsService) {}

  @Handles(Messages.analytics.usage)
  usage(@BusOrg() orgId: string, @BusData() query: UsageQueryDto): Promise<UsageView> {
    return this.analytics.usage(orgId, query);
  }

  @Handles(Messages.analytics.features)
  features(@BusOrg() orgId: string, @BusData() query: AnalyticsRangeQueryDto): Promise<FeaturesView> {
    return this.analytics.features(orgId, query);
  }

  @Handles(Messages.analytics.versions)
  versions(@BusOrg() orgId: string, @BusData() query: AnalyticsRangeQueryDto): Promise<VersionsView> {
    return this.analytics.versions(orgId, query);
  }

  @Handles(Messages.analytics.licenseUsage)
  licenseUsage(@BusOrg() orgId: string, @BusData() request: LicenseUsageRequest): Promise<LicenseUsageView> {
    return this.analytics.licenseUsage(orgId, request);
  }

  @Handles(Messages.analytics.active)
  active(@BusOrg() orgId: string, @BusData() query: ActiveQueryDto): Promise<ActiveView> {
    return this.analytics.active(orgId, query);
  }
}
