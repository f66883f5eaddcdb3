import { MessagePattern } from '@nestjs/microservices';
import {
  AnalyticsRangeQueryDto,
  FeaturesView,
  LicenseUsageRequest,
  LicenseUsageView,
  Subjects,
  UsageQueryDto,
  UsageView,
  VersionsView,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg } from '@licensing/shared/messaging';
import { AnalyticsService } from './analytics.service';

@BusController()
export class AnalyticsController {
  constructor(private readonly analytics: AnalyticsService) {}

  @MessagePattern(Subjects.analytics.usage)
  usage(@BusOrg() orgId: string, @BusData() query: UsageQueryDto): Promise<UsageView> {
    return this.analytics.usage(orgId, query);
  }

  @MessagePattern(Subjects.analytics.features)
  features(@BusOrg() orgId: string, @BusData() query: AnalyticsRangeQueryDto): Promise<FeaturesView> {
    return this.analytics.features(orgId, query);
  }

  @MessagePattern(Subjects.analytics.versions)
  versions(@BusOrg() orgId: string, @BusData() query: AnalyticsRangeQueryDto): Promise<VersionsView> {
    return this.analytics.versions(orgId, query);
  }

  @MessagePattern(Subjects.analytics.licenseUsage)
  licenseUsage(@BusOrg() orgId: string, @BusData() request: LicenseUsageRequest): Promise<LicenseUsageView> {
    return this.analytics.licenseUsage(orgId, request);
  }
}
