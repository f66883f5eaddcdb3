import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsDateString,
  IsIn,
  IsISO8601,
  IsInt,
  IsObject,
  IsUUID,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { MAX_USAGE_INCREMENT } from '../entitlements/entitlement.dto';
import { PageQueryDto } from '../common/pagination.dto';
import { Optional } from '../common/validation';

export class AnalyticsRangeQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only reports of this product' })
  @Optional()
  @IsUUID('all')
  product_id?: string;

  @ApiProperty({ format: 'date-time', description: 'Inclusive start' })
  @IsDateString({ strict: true })
  from!: string;

  @ApiProperty({ format: 'date-time', description: 'Exclusive end' })
  @IsDateString({ strict: true })
  to!: string;
}

export class UsageQueryDto extends AnalyticsRangeQueryDto {
  @ApiPropertyOptional({ enum: ['hour', 'day'], default: 'day' })
  @Optional()
  @IsIn(['hour', 'day'])
  interval?: 'hour' | 'day';
}

export class UsageBucketView {
  @ApiProperty({ format: 'date-time' }) bucket!: string;
  @ApiProperty() syncs!: number;
  @ApiProperty() licenses!: number;
  @ApiProperty() fingerprints!: number;
  @ApiProperty({ nullable: true, type: Number }) peak_seats_in_use!: number | null;
}

export class UsageView {
  @ApiProperty({ enum: ['hour', 'day'] }) interval!: 'hour' | 'day';
  @ApiProperty({ type: [UsageBucketView] }) buckets!: UsageBucketView[];
  @ApiProperty() total!: number;
}

export class FeatureUsageView {
  @ApiProperty() feature!: string;
  @ApiProperty() count!: number;
}

export class FeaturesView {
  @ApiProperty({ type: [FeatureUsageView] }) features!: FeatureUsageView[];
  @ApiProperty() total!: number;
}

export class VersionUsageView {
  @ApiProperty({ nullable: true, type: String }) app_version!: string | null;
  @ApiProperty() count!: number;
}

export class VersionsView {
  @ApiProperty({ type: [VersionUsageView] }) versions!: VersionUsageView[];
  @ApiProperty() total!: number;
}

export class FingerprintSeenView {
  @ApiProperty() fingerprint!: string;
  @ApiProperty({ format: 'date-time' }) last_sync_at!: string;
}

export class LicenseUsageDayView {
  @ApiProperty({ format: 'date', example: '2026-11-23' }) day!: string;
  @ApiProperty() syncs!: number;
  @ApiProperty({ description: 'Distinct machines (hardware fingerprints) that synced that day' })
  machines!: number;
}

export class LicenseUsageView {
  @ApiProperty({ format: 'uuid' }) license_id!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_sync_at!: string | null;
  @ApiProperty() syncs!: number;
  @ApiProperty({ nullable: true, type: Number }) peak_seats_in_use!: number | null;
  @ApiProperty({ type: [String] }) versions!: string[];
  @ApiProperty({ type: [FingerprintSeenView] }) fingerprints!: FingerprintSeenView[];
  @ApiProperty({ description: 'Distinct fingerprints seen (fingerprints is paginated)' }) total!: number;
  @ApiProperty({
    type: [LicenseUsageDayView],
    description:
      'Syncs and machines per UTC day over the reports kept (ANALYTICS_RAW_RETENTION_DAYS), oldest first; days without a sync are left out',
  })
  daily!: LicenseUsageDayView[];
  @ApiProperty({
    description: 'Accepted usage increments (POST /licenses/{id}/usage) counted within the same retention',
  })
  increments!: number;
  @ApiProperty({ description: 'The uses those increments added' }) uses_counted!: number;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_increment_at!: string | null;
}

export class LicenseUsageQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only reports of this product' })
  @Optional()
  @IsUUID('all')
  product_id?: string;
}

export class LicenseUsageRequest extends LicenseUsageQueryDto {
  @IsUUID('all') id!: string;
}

export const ACTIVE_WINDOWS = ['24h', '7d', '30d'] as const;
export type ActiveWindow = (typeof ACTIVE_WINDOWS)[number];

export class ActiveQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only licenses and machines of this product' })
  @Optional()
  @IsUUID('all')
  product_id?: string;

  @ApiPropertyOptional({
    enum: ACTIVE_WINDOWS,
    default: '24h',
    description:
      '24h: the current UTC hour and the 23 before it; 7d, 30d: today (UTC) and the 6 or 29 days before it',
  })
  @Optional()
  @IsIn(ACTIVE_WINDOWS)
  window?: ActiveWindow;
}

export class ActiveView {
  @ApiProperty({ enum: ACTIVE_WINDOWS }) window!: ActiveWindow;
  @ApiProperty({ format: 'date-time', description: 'Start of the window (an hour or day boundary, UTC)' })
  from!: string;
  @ApiProperty({ format: 'date-time', description: 'When the counts were taken' }) to!: string;
  @ApiProperty({ description: 'Distinct licenses that synced in the window' }) licenses!: number;
  @ApiProperty({ description: 'Distinct hardware fingerprints that synced in the window' }) machines!: number;
}

/** What the analytics service reads of a `license.usage_incremented` event's license. */
export class UsageIncrementedData {
  @IsUUID('all') id!: string;
  @IsUUID('all') product_id!: string;
  @IsInt() @Min(1) @Max(MAX_USAGE_INCREMENT) increment!: number;
  /** The license's total after the increment. */
  @IsInt() @Min(0) uses!: number;
}

/** A `license.usage_incremented` event as the analytics service decodes it; other members pass. */
export class UsageIncrementedRecord {
  /** The event id: an increment is counted once, however often the event is delivered. */
  @IsUUID('all') id!: string;
  @IsIn(['license.usage_incremented']) type!: 'license.usage_incremented';
  @IsUUID('all') org_id!: string;
  @IsISO8601() occurred_at!: string;

  @IsObject()
  @ValidateNested()
  @Type(() => UsageIncrementedData)
  data!: UsageIncrementedData;
}
