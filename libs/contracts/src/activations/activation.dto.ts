import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsInt,
  IsObject,
  IsString,
  IsUUID,
  Length,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import { MAX_ENTITLEMENTS } from '../entitlements/entitlement.dto';
import { PageQueryDto } from '../common/pagination.dto';
import { Optional } from '../common/validation';
import {
  LICENSE_STATUSES,
  LicenseStatus,
  VALIDATION_CODES,
  ValidationCode,
  VerifiedLicenseSummaryView,
} from '../licenses/license.dto';
import { IsComponents } from './components.validator';

export class CreateActivationDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'The license, by id (or give license_key)' })
  @ValidateIf((dto: CreateActivationDto) => dto.license_key === undefined || dto.license_id !== undefined)
  @IsUUID('all', { message: 'license_id must be a UUID (license_id or license_key is required)' })
  license_id?: string;

  @ApiPropertyOptional({ description: 'The license, by serial (or give license_id)' })
  @ValidateIf((dto: CreateActivationDto) => dto.license_id === undefined || dto.license_key !== undefined)
  @IsString({ message: 'license_key must be a serial (license_id or license_key is required)' })
  @Length(1, 200)
  license_key?: string;

  @ApiProperty({ minLength: 1, maxLength: 512 })
  @IsString()
  @Length(1, 512)
  fingerprint!: string;

  @ApiPropertyOptional({ maxLength: 255 })
  @Optional()
  @IsString()
  @Length(1, 255)
  hostname?: string;

  @ApiPropertyOptional({ maxLength: 100, example: 'linux-x64' })
  @Optional()
  @IsString()
  @Length(1, 100)
  platform?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Component name → component fingerprint (at most 20)',
  })
  @Optional()
  @IsObject()
  @IsComponents()
  components?: Record<string, string>;
}

export class ListActivationsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only the activations of this license, by id' })
  @Optional()
  @IsUUID('all')
  license_id?: string;

  @ApiPropertyOptional({
    description: 'Only the activations of this license, by serial (as POST /activations takes it)',
  })
  @Optional()
  @IsString()
  @Length(1, 200)
  license_key?: string;
}

export class ActivationView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) license_id!: string;
  @ApiProperty() fingerprint!: string;
  @ApiProperty({ nullable: true, type: String }) hostname!: string | null;
  @ApiProperty({ nullable: true, type: String }) platform!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) components!: Record<
    string,
    string
  >;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) last_heartbeat_at!: string;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'null: no heartbeat required',
  })
  expires_at!: string | null;
}

export class ActivationListView {
  @ApiProperty({ type: [ActivationView] }) activations!: ActivationView[];
  @ApiProperty() total!: number;
}

export class ValidateLicenseDto {
  @ApiProperty({ description: 'The license key: its serial' })
  @IsString()
  @Length(1, 200)
  key!: string;

  @ApiPropertyOptional({ maxLength: 512 })
  @Optional()
  @IsString()
  @Length(1, 512)
  fingerprint?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @Optional()
  @IsObject()
  @IsComponents()
  components?: Record<string, string>;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_ENTITLEMENTS,
    example: ['export.pdf'],
    description: 'Entitlement codes the application needs: `ENTITLEMENTS_MISSING` when the license lacks one',
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(MAX_ENTITLEMENTS)
  @IsString({ each: true })
  @Length(1, 100, { each: true })
  entitlements?: string[];
}

/** What validate says of the license: the verified summary, with its stored status and seats. */
export class ValidatedLicenseView extends VerifiedLicenseSummaryView {
  @ApiProperty({ enum: LICENSE_STATUSES }) status!: LicenseStatus;
  @ApiProperty() max_seats!: number;
}

export class ValidationResultView {
  @ApiProperty() valid!: boolean;
  @ApiProperty({ enum: VALIDATION_CODES }) code!: ValidationCode;
  @ApiProperty() detail!: string;
  @ApiProperty({ type: ValidatedLicenseView, nullable: true }) license!: ValidatedLicenseView | null;
  @ApiProperty({ type: ActivationView, nullable: true }) activation!: ActivationView | null;
}

/** An activation as `POST /activations` answers it: with a machine token when a license token asked. */
export class CreatedActivationView extends ActivationView {
  @ApiPropertyOptional({
    description:
      'Only when the request was made with a license token: a machine token (`mt_…`, shown only in ' +
      'this answer) that acts on this activation alone and dies with it',
  })
  machine_token?: string;
}

/** The license service's answer to an activation: the seat, and whether it is new (201) or held already (200). */
export interface ActivationCreatedReply {
  activation: ActivationView;
  /** Issued when a license token asked for the seat. */
  machine_token?: string;
  /** False when the machine already held a seat: the same activation is answered again. */
  created: boolean;
}

/** The longest an offline activation file is issued for; it is renewed by submitting the request again. */
export const MAX_OFFLINE_ACTIVATION_DAYS = 366;

export class OfflineActivationDto {
  @ApiProperty({
    description:
      'The activation request file the SDK created on the machine: a compact JWS signed with the ' +
      "machine's own Ed25519 key (`typ` `activation-request+jwt`)",
    maxLength: 8192,
  })
  @IsString()
  @Length(1, 8192)
  request!: string;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_OFFLINE_ACTIVATION_DAYS,
    description:
      "How long the activation file is valid: never longer than the organization's checkout TTL " +
      "(30 days by default) nor past the license's valid_until",
  })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_OFFLINE_ACTIVATION_DAYS)
  valid_days?: number;
}

export class OfflineActivationView {
  @ApiProperty({ type: ActivationView }) activation!: ActivationView;
  @ApiProperty({
    description:
      "The signed activation file to carry to the machine: a compact JWS signed with the product's key " +
      '(`typ` `activation+jwt`)',
  })
  activation_file!: string;
  @ApiProperty({ format: 'date-time' }) expires_at!: string;
}

/** What the gateway sends the license service: the request, and the organization's checkout TTL. */
export class OfflineActivationMessage extends OfflineActivationDto {
  @IsInt()
  @Min(1)
  ttl_seconds!: number;
}

/** The license service's answer: the file, and whether the seat is new (201) or held already (200). */
export interface OfflineActivationReply extends OfflineActivationView {
  created: boolean;
}

export class OfflineReleaseDto {
  @ApiProperty({
    description:
      "The release file the SDK created on the machine: a compact JWS signed with the machine's key " +
      'from its activation request (`typ` `activation-release+jwt`)',
    maxLength: 8192,
  })
  @IsString()
  @Length(1, 8192)
  release!: string;
}
