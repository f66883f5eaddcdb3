import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { LICENSE_TYPES, LicenseType } from '@licensing/license-format';
import { IdDto } from '../common/common.dto';
import { PageQueryDto } from '../common/pagination.dto';
import { Nullable, Optional } from '../common/validation';
import { MAX_HEARTBEAT_INTERVAL_SECONDS, MAX_VALID_DAYS } from '../products/product.dto';
import { ENTITLEMENT_CODE_PATTERN, MAX_ENTITLEMENTS, MAX_USES } from '../entitlements/entitlement.dto';

/** How far activations may go past `max_machines`: a factor of it, or no ceiling at all. */
export const OVERAGE_RULES = ['none', '1.25x', '1.5x', '2x', 'always'] as const;
export type OverageRule = (typeof OVERAGE_RULES)[number];

/** How many of a machine's recorded components validate needs to find equal. */
export const MACHINE_MATCHING_RULES = ['any', 'two', 'most', 'all'] as const;
export type MachineMatchingRule = (typeof MACHINE_MATCHING_RULES)[number];

/** When a policy's licenses get their `uses` back to 0: each UTC day, ISO week or month. */
export const USES_RESET_PERIODS = ['day', 'week', 'month'] as const;
export type UsesResetPeriod = (typeof USES_RESET_PERIODS)[number];

export const MAX_POLICY_MACHINES = 1_000_000;
export const MAX_PROCESSES = 1_000_000;
export const MAX_CHECK_IN_INTERVAL_DAYS = 3_650;

export class CreatePolicyDto {
  @ApiProperty({ format: 'uuid', description: 'The product the policy licenses; immutable' })
  @IsUUID('all')
  product_id!: string;

  @ApiProperty({ minLength: 1, maxLength: 255, example: 'Pro, yearly' })
  @IsString()
  @Length(1, 255)
  name!: string;

  @ApiPropertyOptional({ enum: LICENSE_TYPES, default: 'subscription' })
  @Optional()
  @IsIn(LICENSE_TYPES)
  license_type?: LicenseType;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_VALID_DAYS,
    nullable: true,
    description:
      "Validity of a new license in days; null: perpetual. Defaults to the product's default_valid_days",
  })
  @Nullable()
  @IsInt()
  @Min(1)
  @Max(MAX_VALID_DAYS)
  duration_days?: number | null;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_POLICY_MACHINES, default: 1 })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_POLICY_MACHINES)
  max_machines?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PROCESSES,
    nullable: true,
    description: 'Processes per machine; null: no limit',
  })
  @Nullable()
  @IsInt()
  @Min(1)
  @Max(MAX_PROCESSES)
  max_processes?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_USES,
    nullable: true,
    description: "The max_uses of the policy's licenses, unless a license sets its own; null: no limit",
  })
  @Nullable()
  @IsInt()
  @Min(0)
  @Max(MAX_USES)
  max_uses?: number | null;

  @ApiPropertyOptional({
    enum: USES_RESET_PERIODS,
    nullable: true,
    description:
      "When the licenses' uses go back to 0: at each UTC day, ISO week (Monday) or month. null: never",
  })
  @Nullable()
  @IsIn(USES_RESET_PERIODS)
  uses_reset?: UsesResetPeriod | null;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_ENTITLEMENTS,
    default: [],
    example: ['export.pdf'],
    description:
      'Entitlement codes every license of the policy holds, beside its own. A PATCH replaces the list',
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(MAX_ENTITLEMENTS)
  @IsString({ each: true })
  @Length(1, 100, { each: true })
  @Matches(ENTITLEMENT_CODE_PATTERN, {
    each: true,
    message: 'each of entitlements must be an entitlement code',
  })
  entitlements?: string[];

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_HEARTBEAT_INTERVAL_SECONDS,
    nullable: true,
    description:
      "Seconds a machine or process may go without a heartbeat; replaces the product's " +
      'activation_heartbeat_interval. null: no heartbeat required',
  })
  @Nullable()
  @IsInt()
  @Min(1)
  @Max(MAX_HEARTBEAT_INTERVAL_SECONDS)
  heartbeat_interval_seconds?: number | null;

  @ApiPropertyOptional({
    minimum: 0,
    maximum: MAX_HEARTBEAT_INTERVAL_SECONDS,
    default: 0,
    description: 'Seconds a lapsed machine or process keeps its place, during which a heartbeat revives it',
  })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_HEARTBEAT_INTERVAL_SECONDS)
  heartbeat_grace_seconds?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_CHECK_IN_INTERVAL_DAYS,
    nullable: true,
    description: 'Days between check-ins before validate answers OVERDUE; null: no check-in required',
  })
  @Nullable()
  @IsInt()
  @Min(1)
  @Max(MAX_CHECK_IN_INTERVAL_DAYS)
  check_in_interval_days?: number | null;

  @ApiPropertyOptional({ enum: OVERAGE_RULES, default: 'none' })
  @Optional()
  @IsIn(OVERAGE_RULES)
  overage?: OverageRule;

  @ApiPropertyOptional({ enum: MACHINE_MATCHING_RULES, default: 'all' })
  @Optional()
  @IsIn(MACHINE_MATCHING_RULES)
  machine_matching?: MachineMatchingRule;
}

/** PATCH: any subset of the fields but `product_id`, which never changes (sending it is a `400`). */
export class UpdatePolicyDto extends OmitType(CreatePolicyDto, ['product_id', 'name'] as const) {
  @ApiPropertyOptional({ minLength: 1, maxLength: 255 })
  @Optional()
  @IsString()
  @Length(1, 255)
  name?: string;
}

export class UpdatePolicyMessage extends IdDto {
  @IsObject()
  @ValidateNested()
  @Type(() => UpdatePolicyDto)
  changes!: UpdatePolicyDto;
}

export class ListPoliciesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @Optional()
  @IsUUID('all')
  product_id?: string;
}

export class PolicyView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) product_id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: LICENSE_TYPES }) license_type!: LicenseType;
  @ApiProperty({ nullable: true, type: Number, description: 'null: perpetual' }) duration_days!:
    number | null;
  @ApiProperty() max_machines!: number;
  @ApiProperty({ nullable: true, type: Number }) max_processes!: number | null;
  @ApiProperty({ nullable: true, type: Number, description: 'null: no limit' }) max_uses!: number | null;
  @ApiProperty({ enum: USES_RESET_PERIODS, nullable: true, description: 'null: never' })
  uses_reset!: UsesResetPeriod | null;
  @ApiProperty({ nullable: true, type: Number }) heartbeat_interval_seconds!: number | null;
  @ApiProperty() heartbeat_grace_seconds!: number;
  @ApiProperty({ nullable: true, type: Number }) check_in_interval_days!: number | null;
  @ApiProperty({ enum: OVERAGE_RULES }) overage!: OverageRule;
  @ApiProperty({ enum: MACHINE_MATCHING_RULES }) machine_matching!: MachineMatchingRule;
  @ApiProperty({ type: [String], description: 'Sorted by code point' }) entitlements!: string[];
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class PolicyListView {
  @ApiProperty({ type: [PolicyView] }) policies!: PolicyView[];
  @ApiProperty() total!: number;
}
