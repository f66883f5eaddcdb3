import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  ActiveQueryDto,
  ActiveView,
  AnalyticsRangeQueryDto,
  FeaturesView,
  LicenseUsageQueryDto,
  LicenseUsageView,
  Messages,
  UsageQueryDto,
  UsageView,
  VersionsView,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Operation } from '../http/operation';
import { Answers } from '../http/answers';
import { routes, uuidParam } from '../http/routes';
import { AllowScopes } from '../http/route-access';

/** Usage of the organization's licenses, from the reports their applications send with sync. */
@ApiTags('analytics')
@Controller(routes('analytics'))
export class AnalyticsController {
  constructor(private readonly bus: BusClient) {}

  @Get('usage')
  @Operation({
    id: 'getUsage',
    summary: 'Usage over time',
    description:
      'Sync reports per UTC hour or day (`interval`, default `day`), oldest first: reports, distinct ' +
      'licenses and fingerprints, and the peak of `seats_in_use`. Only buckets with reports are ' +
      'listed. A report counts within about a second of its sync. ' +
      '`from` (inclusive) and `to` (exclusive) are required ISO 8601 date-times, at most 31 days apart ' +
      'for hourly buckets and 366 days otherwise; `product_id` narrows to one product.',
  })
  @AllowScopes('read')
  @Answers(Messages.analytics.usage, {
    description: 'One bucket per UTC hour or day that has reports, oldest first; total counts those buckets',
  })
  @ApiProblems()
  usage(@Query() query: UsageQueryDto): Promise<UsageView> {
    return this.bus.send(Messages.analytics.usage, query);
  }

  @Get('features')
  @Operation({
    id: 'getFeatureUsage',
    summary: 'Feature usage',
    description:
      'How many sync reports listed each feature, most used first. ' +
      '`from` (inclusive) and `to` (exclusive) are required ISO 8601 date-times, at most 31 days apart ' +
      'for hourly buckets and 366 days otherwise; `product_id` narrows to one product.',
  })
  @AllowScopes('read')
  @Answers(Messages.analytics.features, { description: 'Reports that listed each feature, most used first' })
  @ApiProblems()
  features(@Query() query: AnalyticsRangeQueryDto): Promise<FeaturesView> {
    return this.bus.send(Messages.analytics.features, query);
  }

  @Get('versions')
  @Operation({
    id: 'getVersionUsage',
    summary: 'Application versions in use',
    description:
      'Sync reports per `app_version` (`null`: not reported), most first. ' +
      '`from` (inclusive) and `to` (exclusive) are required ISO 8601 date-times, at most 31 days apart ' +
      'for hourly buckets and 366 days otherwise; `product_id` narrows to one product.',
  })
  @AllowScopes('read')
  @Answers(Messages.analytics.versions, {
    description: 'Reports per app_version (null: not reported), most first',
  })
  @ApiProblems()
  versions(@Query() query: AnalyticsRangeQueryDto): Promise<VersionsView> {
    return this.bus.send(Messages.analytics.versions, query);
  }

  @Get('active')
  @Operation({
    id: 'getActiveUsage',
    summary: 'Active licenses and machines',
    description:
      'Distinct licenses and machines (fingerprints) that synced in the last `window` (`24h`, `7d` or ' +
      '`30d`, counted over whole UTC hours or days); `product_id` narrows to one product.',
  })
  @AllowScopes('read')
  @Answers(Messages.analytics.active, {
    description: 'Distinct licenses and machines that synced in the window (whole UTC hours or days)',
  })
  @ApiProblems()
  active(@Query() query: ActiveQueryDto): Promise<ActiveView> {
    return this.bus.send(Messages.analytics.active, query);
  }
}

/** One license's usage; served beside the license routes, answered by the analytics service. */
@ApiTags('analytics')
@Controller(routes('licenses'))
export class LicenseUsageController {
  constructor(private readonly bus: BusClient) {}

  @Get(':id/usage')
  @Operation({
    id: 'getLicenseUsage',
    summary: "A license's usage",
    description:
      "One license's sync history within the raw-report retention (30 days by default): last sync, " +
      'number of reports, peak seats in use, the versions seen, and its machines (fingerprints, most ' +
      'recent first, a page at a time); `product_id` is accepted for symmetry with the other analytics ' +
      'routes. A license that never synced answers zeros and empty lists.',
  })
  @AllowScopes('read')
  @Answers(Messages.analytics.licenseUsage, {
    description: 'fingerprints is paginated, most recent sync first',
  })
  @ApiProblems(['not_found', 'the license does not exist in the organization'])
  usage(@Param('id', uuidParam) id: string, @Query() query: LicenseUsageQueryDto): Promise<LicenseUsageView> {
    return this.bus.send(Messages.analytics.licenseUsage, { id, ...query });
  }
}
