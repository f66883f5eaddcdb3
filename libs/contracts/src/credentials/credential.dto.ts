import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsDateString,
  IsIn,
  IsInt,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  Min,
} from 'class-validator';
import { PageQueryDto } from '../common/pagination.dto';
import { Optional } from '../common/validation';

/** `lt_` (license token) or `mt_` (machine token), then 43 base64url characters: 256 random bits. */
export const LICENSE_TOKEN_PATTERN = /^lt_[A-Za-z0-9_-]{43}$/;
export const MACHINE_TOKEN_PATTERN = /^mt_[A-Za-z0-9_-]{43}$/;

/** The file lifetime of a checkout and of an air-gapped activation file, unless the organization sets another. */
export const DEFAULT_CHECKOUT_TTL_SECONDS = 2_592_000;
export const MIN_CHECKOUT_TTL_SECONDS = 3_600;
export const MAX_CHECKOUT_TTL_SECONDS = 31_536_000;

export class CreateLicenseTokenDto {
  @ApiPropertyOptional({ maxLength: 255, example: 'photo-editor on ada-laptop' })
  @Optional()
  @IsString()
  @Length(1, 255)
  name?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the token stops working; absent: it works until revoked',
  })
  @Optional()
  @IsDateString({ strict: true })
  expires_at?: string;
}

/** The license service's message: the token's license and the request. */
export class CreateLicenseTokenMessage extends CreateLicenseTokenDto {
  @IsUUID('all')
  license_id!: string;
}

export class ListLicenseTokensMessage extends PageQueryDto {
  @IsUUID('all')
  license_id!: string;
}

export class LicenseTokenView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) license_id!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ description: "The token's first 10 characters, for recognising it", example: 'lt_Xk3f9QZ' })
  prefix!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) expires_at!: string | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class CreatedLicenseTokenView extends LicenseTokenView {
  @ApiProperty({ description: 'The token itself (`lt_…`), shown only in this answer' })
  token!: string;
}

export class LicenseTokenListView {
  @ApiProperty({ type: [LicenseTokenView] }) license_tokens!: LicenseTokenView[];
  @ApiProperty() total!: number;
}

export class ResolveCredentialDto {
  @IsIn(['license', 'machine'])
  kind!: 'license' | 'machine';

  @IsString()
  @Matches(/^[0-9a-f]{64}$/)
  token_hash!: string;
}

/** A license or machine token, resolved by the hash of its secret: who holds it, and what it reaches. */
export interface ResolvedCredential {
  kind: 'license' | 'machine';
  /** The license token's id, or the machine token's activation. */
  id: string;
  org_id: string;
  name: string;
  prefix: string;
  license_id: string;
  serial: string;
  product_id: string;
  /** Machine tokens only. */
  activation_id?: string;
  fingerprint?: string;
  expires_at: string | null;
}

export interface ResolveCredentialReply {
  credential: ResolvedCredential | null;
}

/** The caller's organization and the settings an admin may change. */
export class OrganizationView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({
    description:
      'Whether `client` API keys may call the routes that act on one license (activations, ' +
      'heartbeats, validate with a fingerprint, sync, usage, checkouts). When false, only license and machine tokens ' +
      'reach them.',
  })
  client_keys_license_actions!: boolean;
  @ApiProperty({
    minimum: MIN_CHECKOUT_TTL_SECONDS,
    maximum: MAX_CHECKOUT_TTL_SECONDS,
    description:
      'How long an air-gapped activation file stays valid, and a checked-out license file when the ' +
      'checkout names no `ttl_seconds`',
  })
  checkout_ttl_seconds!: number;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class UpdateOrganizationDto {
  @ApiPropertyOptional()
  @Optional()
  @IsBoolean()
  client_keys_license_actions?: boolean;

  @ApiPropertyOptional({ minimum: MIN_CHECKOUT_TTL_SECONDS, maximum: MAX_CHECKOUT_TTL_SECONDS })
  @Optional()
  @IsInt()
  @Min(MIN_CHECKOUT_TTL_SECONDS)
  @Max(MAX_CHECKOUT_TTL_SECONDS)
  checkout_ttl_seconds?: number;
}
