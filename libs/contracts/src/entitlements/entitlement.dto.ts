import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
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
import { IdDto } from '../common/common.dto';
import { Optional } from '../common/validation';

/** Lowercase letters and digits, in parts joined by one `.`, `_` or `-`: `export.pdf`, `seats_2`. */
export const ENTITLEMENT_CODE_PATTERN = /^[a-z0-9]+([._-][a-z0-9]+)*$/;
/** How many codes one attach or detach may name, and how many a license may hold. */
export const MAX_ENTITLEMENTS = 100;
/** The largest single usage increment. */
export const MAX_USAGE_INCREMENT = 1_000_000;
/** The largest `max_uses` (a PostgreSQL integer holds the running total). */
export const MAX_USES = 2_000_000_000;

const CODE_MESSAGE = 'code must be lowercase letters and digits, in parts joined by one ".", "_" or "-"';

export class CreateEntitlementDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 100,
    pattern: ENTITLEMENT_CODE_PATTERN.source,
    example: 'export.pdf',
    description: 'Unique in the organization; immutable',
  })
  @IsString()
  @Length(1, 100)
  @Matches(ENTITLEMENT_CODE_PATTERN, { message: CODE_MESSAGE })
  code!: string;

  @ApiProperty({ minLength: 1, maxLength: 255, example: 'Export to PDF' })
  @IsString()
  @Length(1, 255)
  name!: string;
}

/** `code` is absent: sending it is an unknown field and a 400, even unchanged. */
export class UpdateEntitlementDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 255, example: 'Export to PDF and PDF/A' })
  @Optional()
  @IsString()
  @Length(1, 255)
  name?: string;
}

export class UpdateEntitlementMessage extends IdDto {
  @IsObject()
  @ValidateNested()
  @Type(() => UpdateEntitlementDto)
  changes!: UpdateEntitlementDto;
}

export class EntitlementView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ example: 'export.pdf' }) code!: string;
  @ApiProperty({ example: 'Export to PDF' }) name!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class EntitlementListView {
  @ApiProperty({ type: [EntitlementView] }) entitlements!: EntitlementView[];
  @ApiProperty() total!: number;
}

/** The body of attach and detach: entitlement codes of the organization's catalog. */
export class LicenseEntitlementsDto {
  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: MAX_ENTITLEMENTS,
    example: ['export.pdf', 'cloud-sync'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_ENTITLEMENTS)
  @IsString({ each: true })
  @Length(1, 100, { each: true })
  @Matches(ENTITLEMENT_CODE_PATTERN, { each: true, message: 'each of codes must be an entitlement code' })
  codes!: string[];
}

export class LicenseEntitlementsMessage extends LicenseEntitlementsDto {
  @IsUUID('all') id!: string;
}

export class UsageIncrementDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_USAGE_INCREMENT, default: 1, example: 1 })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_USAGE_INCREMENT)
  increment?: number;
}

export class UsageIncrementMessage extends UsageIncrementDto {
  @IsUUID('all') id!: string;
}

/** A license's metered usage. */
export class LicenseUsesView {
  @ApiProperty({ example: 12, description: 'Uses counted since the last reset' }) uses!: number;
  @ApiProperty({ nullable: true, type: Number, example: 50, description: 'null: no limit' })
  max_uses!: number | null;
}
