import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsEmail,
  IsIn,
  IsDateString,
  IsInt,
  IsObject,
  IsString,
  IsUUID,
  Length,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto } from '../common/pagination.dto';
import { Nullable, Optional } from '../common/validation';
import { MAX_FEATURES, MAX_VALID_DAYS } from '../products/product.dto';
import { LICENSE_TYPES, LicenseType } from '@licensing/license-format';
import { MAX_USES } from '../entitlements/entitlement.dto';

export const LICENSE_STATUSES = ['active', 'revoked', 'expired', 'suspended'] as const;
export type LicenseStatus = (typeof LICENSE_STATUSES)[number];
export const MAX_SEATS = 1_000_000;
/** A `.lic` file is a few hundred bytes to a few KB; anything far larger is not one of ours. */
export const MAX_BLOB_LENGTH = 64 * 1024;

export class HardwareBindingDto {
  @ApiProperty({ minLength: 1, maxLength: 512, example: 'a3f1c2...' })
  @IsString()
  @Length(1, 512)
  fingerprint!: string;
}

export class CreateLicenseDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description:
      "Required without policy_id; with one, it may be left out (the policy's) or must be the policy's",
  })
  @ValidateIf((dto: CreateLicenseDto) => dto.policy_id === undefined || dto.product_id !== undefined)
  @IsUUID('all', { message: 'product_id must be a UUID (product_id or policy_id is required)' })
  product_id?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'The policy the license follows: its license_type, validity (duration_days), max_seats ' +
      '(max_machines) and max_uses unless the request gives them, its entitlements, and its ' +
      'limits on every online path',
  })
  @Optional()
  @IsUUID('all')
  policy_id?: string;

  @ApiPropertyOptional({ enum: LICENSE_TYPES, default: 'subscription' })
  @Optional()
  @IsIn(LICENSE_TYPES)
  license_type?: LicenseType;

  @ApiPropertyOptional({ type: String, maxLength: 255, nullable: true })
  @Nullable()
  @IsString()
  @Length(1, 255)
  customer_id?: string | null;

  @ApiPropertyOptional({ type: String, format: 'email', maxLength: 320, nullable: true })
  @Nullable()
  @IsEmail()
  @MaxLength(320)
  customer_email?: string | null;

  @ApiPropertyOptional({ type: [String], description: "Defaults to the product's default_features" })
  @Optional()
  @IsArray()
  @ArrayMaxSize(MAX_FEATURES)
  @IsString({ each: true })
  @Length(1, 100, { each: true })
  features?: string[];

  @ApiPropertyOptional({
    minimum: 0,
    maximum: MAX_VALID_DAYS,
    description: "Validity in days from now; 0 means perpetual. Defaults to the product's default_valid_days",
  })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_VALID_DAYS)
  valid_days?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_SEATS, default: 1 })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_SEATS)
  max_seats?: number;

  @ApiPropertyOptional({ type: HardwareBindingDto, nullable: true })
  @Nullable()
  @IsObject()
  @ValidateNested()
  @Type(() => HardwareBindingDto)
  hardware_binding?: HardwareBindingDto | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_USES,
    nullable: true,
    description:
      'How many uses the license may count (POST /licenses/{id}/usage); null: no limit. Defaults to ' +
      "its policy's max_uses; given, the license keeps it when the policy's changes",
  })
  @Nullable()
  @IsInt()
  @Min(0)
  @Max(MAX_USES)
  max_uses?: number | null;
}

export class ListLicensesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @Optional()
  @IsUUID('all')
  product_id?: string;

  @ApiPropertyOptional({
    enum: LICENSE_STATUSES,
    description: 'Effective status (an overdue license is expired)',
  })
  @Optional()
  @IsIn(LICENSE_STATUSES)
  status?: LicenseStatus;

  @ApiPropertyOptional({ maxLength: 320, description: 'Case-insensitive substring; % and _ are literal' })
  @Optional()
  @IsString()
  @Length(1, 320)
  customer_email?: string;

  @ApiPropertyOptional({
    maxLength: 160,
    example: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC',
    description: 'The whole serial, case-insensitive (serials are upper case): at most one license',
  })
  @Optional()
  @IsString()
  @Length(1, 160)
  serial?: string;
}

export class VerifyLicenseDto {
  @ApiProperty({ description: 'Standard base64 of the .lic file', maxLength: MAX_BLOB_LENGTH })
  @IsString()
  @Length(1, MAX_BLOB_LENGTH)
  license_blob!: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Required when public_key is absent' })
  @ValidateIf((dto: VerifyLicenseDto) => dto.public_key === undefined || dto.product_id !== undefined)
  @IsUUID('all', { message: 'product_id must be a UUID (product_id or public_key is required)' })
  product_id?: string;

  @ApiPropertyOptional({ description: 'PEM public key; required when product_id is absent' })
  @ValidateIf((dto: VerifyLicenseDto) => dto.product_id === undefined || dto.public_key !== undefined)
  @IsString({ message: 'public_key must be a PEM string (product_id or public_key is required)' })
  @Length(1, 16_384)
  public_key?: string;
}

export class HardwareBindingView {
  @ApiProperty() fingerprint!: string;
}

export class LicenseView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) product_id!: string;
  @ApiProperty() product_name!: string;
  @ApiProperty() product_code!: string;
  @ApiProperty({ example: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC' }) serial!: string;
  @ApiProperty({ enum: LICENSE_TYPES }) license_type!: LicenseType;
  @ApiProperty({ nullable: true, type: String }) customer_id!: string | null;
  @ApiProperty({ nullable: true, type: String }) customer_email!: string | null;
  @ApiProperty({ enum: LICENSE_STATUSES }) status!: LicenseStatus;
  @ApiProperty({ format: 'date-time' }) valid_from!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) valid_until!: string | null;
  @ApiProperty({ type: [String] }) features!: string[];
  @ApiProperty() max_seats!: number;
  @ApiProperty({ type: HardwareBindingView, nullable: true }) hardware_binding!: HardwareBindingView | null;
  @ApiProperty({ format: 'uuid' }) key_pair_id!: string;
  @ApiProperty({
    type: [String],
    example: ['cloud-sync', 'export.pdf'],
    description: "The license's entitlement codes: its policy's and its own, sorted",
  })
  entitlements!: string[];
  @ApiProperty({ description: 'Uses counted since the last reset (POST /licenses/{id}/usage)' })
  uses!: number;
  @ApiProperty({ nullable: true, type: Number, description: 'null: no limit' }) max_uses!: number | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revoked_at!: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'null: no policy' })
  policy_id!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'null: never checked in' })
  last_check_in_at!: string | null;
  @ApiPropertyOptional({ description: 'Base64 of the signed .lic file (absent from list items)' })
  license_blob?: string;
}

export class LicenseListView {
  @ApiProperty({ type: [LicenseView] }) licenses!: LicenseView[];
  @ApiProperty() total!: number;
}

export const VERIFY_ERROR_CODES = [
  'malformed',
  'unknown_key',
  'signature_invalid',
  'product_mismatch',
  'not_yet_valid',
  'expired',
  'file_expired',
  'revoked',
  'suspended',
] as const;
export type VerifyErrorCode = (typeof VERIFY_ERROR_CODES)[number];

export class VerifyErrorView {
  @ApiProperty({ enum: VERIFY_ERROR_CODES }) code!: VerifyErrorCode;
  @ApiProperty() message!: string;
}

export class VerifiedLicenseSummaryView {
  @ApiProperty() serial!: string;
  @ApiProperty({ format: 'uuid' }) product_id!: string;
  @ApiProperty({ nullable: true, type: String }) customer_id!: string | null;
  @ApiProperty({ type: [String] }) features!: string[];
  @ApiProperty({
    type: [String],
    description: 'The entitlement codes the file carries (empty when it has no `entitlements` claim)',
  })
  entitlements!: string[];
  @ApiProperty({ format: 'date-time' }) valid_from!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) valid_until!: string | null;
  @ApiProperty() is_expired!: boolean;
}

export class VerifyResultView {
  @ApiProperty() valid!: boolean;
  @ApiProperty({ type: VerifiedLicenseSummaryView, nullable: true })
  license!: VerifiedLicenseSummaryView | null;
  @ApiProperty({ type: [VerifyErrorView] }) errors!: VerifyErrorView[];
}

export const PATCHABLE_STATUSES = ['active', 'suspended'] as const;

/**
 * PATCH: any subset of these. `null` clears customer_id, customer_email and hardware_binding, and
 * makes valid_until perpetual. `status` moves only between active and suspended.
 */
export class UpdateLicenseDto extends PickType(CreateLicenseDto, [
  'customer_id',
  'customer_email',
  'features',
  'max_seats',
  'hardware_binding',
  'max_uses',
] as const) {
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'null: perpetual. In the past: the license is expired. Never before valid_from.',
  })
  @Nullable()
  @IsDateString({ strict: true })
  valid_until?: string | null;

  @ApiPropertyOptional({ enum: PATCHABLE_STATUSES })
  @Optional()
  @IsIn(PATCHABLE_STATUSES, { message: 'status can only be set to active or suspended' })
  status?: (typeof PATCHABLE_STATUSES)[number];
}

export class UpdateLicenseMessage {
  @IsUUID('all') id!: string;

  @IsObject()
  @ValidateNested()
  @Type(() => UpdateLicenseDto)
  changes!: UpdateLicenseDto;
}

export const VALIDATION_CODES = [
  'VALID',
  'NOT_FOUND',
  'REVOKED',
  'SUSPENDED',
  'EXPIRED',
  'OVERDUE',
  'FINGERPRINT_MISMATCH',
  'NO_ACTIVATION',
  'HEARTBEAT_DEAD',
  'COMPONENTS_MISMATCH',
  'ENTITLEMENTS_MISSING',
  'OVERAGE',
] as const;
export type ValidationCode = (typeof VALIDATION_CODES)[number];
