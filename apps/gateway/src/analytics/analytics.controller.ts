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
import { Answers } from '../http/answers';
import { routes, uuidParam } from '../http/routes';
import { AllowScopes } from '../identity/scopes';

/** Usage of the organization's licenses, from the reports their applications send with sync. */
@ApiTags('analytics')
@Controller(routes('analytics'))
export class AnalyticsController {
  constructor(private readonly bus: BusClient) {}

  @Get('usage')
  @AllowScopes('read')
  @Answers(Messages.analytics.usage, {
    description: 'One bucket per UTC hour or day that has reports, oldest first; total counts those buckets',
  })
  @ApiProblems()
  usage(@Query() query: UsageQueryDto): Promise<UsageView> {
    return this.bus.send(Messages.analytics.usage, query);
  }

  @Get('features')
  @AllowScopes('read')
  @Answers(Messages.analytics.features, { description: 'Reports that listed each feature, most used first' })
  @ApiProblems()
  features(@Query() query: AnalyticsRangeQueryDto): Promise<FeaturesView> {
    return this.bus.send(Messages.analytics.features, query);
  }

  @Get('versions')
  @AllowScopes('read')
  @Answers(Messages.analytics.versions, {
    description: 'Reports per app_version (null: not reported), most first',
  })
  @ApiProblems()
  versions(@Query() query: AnalyticsRangeQueryDto): Promise<VersionsView> {
    return this.bus.send(Messages.analytics.versions, query);
  }

  @Get('active')
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
  @AllowScopes('read')
  @Answers(Messages.analytics.licenseUsage, {
    description: 'fingerprints is paginated, most recent sync first',
  })
  @ApiProblems(404)
  usage(@Param('id', uuidParam) id: string, @Query() query: LicenseUsageQueryDto): Promise<LicenseUsageView> {
    return this.bus.send(Messages.analytics.licenseUsage, { id, ...query });
  }
}
