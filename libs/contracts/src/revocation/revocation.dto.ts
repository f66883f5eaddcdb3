import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsISO8601,
  IsInt,
  IsString,
  IsUUID,
  Length,
  Max,
  Min,
} from 'class-validator';
import { IsStorableText, Nullable, Optional } from '../common/validation';
import { LICENSE_STATUSES, LicenseStatus, MAX_SEATS } from '../licenses/license.dto';
import { MAX_FEATURES } from '../products/product.dto';

export const MAX_SERIALS_PER_CHECK = 100;
export const REVOCATION_STATUSES = [...LICENSE_STATUSES, 'not_found'] as const;
export type RevocationStatus = (typeof REVOCATION_STATUSES)[number];
export const SYNC_STATUSES = ['ok', 'revoked', 'expired', 'suspended', 'not_found'] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];

export class CheckRevocationDto {
  @ApiProperty({ type: [String], minItems: 1, maxItems: MAX_SERIALS_PER_CHECK })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_SERIALS_PER_CHECK)
  @IsString({ each: true })
  @Length(1, 200, { each: true })
  serials!: string[];
}

export class RevocationResultView {
  @ApiProperty() serial!: string;
  @ApiProperty({ enum: REVOCATION_STATUSES }) status!: RevocationStatus;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revoked_at!: string | null;
}

export class CheckRevocationView {
  @ApiProperty({
    type: [RevocationResultView],
    description: 'One per distinct serial, in order of first appearance',
  })
  results!: RevocationResultView[];
  @ApiProperty({ format: 'date-time' }) checked_at!: string;
}

export class SyncReportDto {
  @ApiProperty({ example: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC' })
  @IsString()
  @Length(1, 200)
  license_serial!: string;

  @ApiPropertyOptional({ maxLength: 512 })
  @Optional()
  @IsString()
  @Length(1, 512)
  hardware_fingerprint?: string;

  @ApiPropertyOptional({ maxLength: 64, example: '2.4.1' })
  @Optional()
  @IsString()
  @Length(1, 64)
  app_version?: string;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_FEATURES })
  @Optional()
  @IsArray()
  @ArrayMaxSize(MAX_FEATURES)
  @IsString({ each: true })
  @Length(1, 100, { each: true })
  features_used?: string[];

  @ApiPropertyOptional({ minimum: 0 })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_SEATS)
  seats_in_use?: number;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Idempotency key: a report sent again with the same id is counted once',
  })
  @Optional()
  @IsUUID('all')
  report_id?: string;
}

export class SyncResultView {
  @ApiProperty({ enum: SYNC_STATUSES }) status!: SyncStatus;
  @ApiProperty({ nullable: true, type: String }) message!: string | null;
  @ApiProperty({ format: 'date-time' }) server_time!: string;
}

/**
 * What the revocation service knows of a serial, cached in Redis and answered by the license
 * service on a miss. `status` is the stored status; the effective one is derived when answering.
 */
export interface SerialStatus {
  serial: string;
  org_id: string;
  license_id: string;
  product_id: string;
  status: LicenseStatus;
  revoked_at: string | null;
  valid_until: string | null;
  max_seats: number;
  /** Milliseconds of the change this entry reflects; an older change never overwrites a newer one. */
  version: number;
}

/**
 * A usage report as it travels on the SYNC_REPORTS stream to the analytics service, validated
 * there on receipt (`decodeMessage`): whatever passes is something PostgreSQL can store.
 * `status` is not checked against today's SYNC_STATUSES: a status added later must not cost a report.
 */
export class SyncReportRecord {
  @IsUUID('all') report_id!: string;
  @IsUUID('all') org_id!: string;
  @IsUUID('all') license_id!: string;
  @IsUUID('all') product_id!: string;
  @IsString() @Length(1, 200) @IsStorableText() serial!: string;
  @Nullable() @IsString() @Length(1, 512) @IsStorableText() hardware_fingerprint!: string | null;
  @Nullable() @IsString() @Length(1, 64) @IsStorableText() app_version!: string | null;
  @Nullable()
  @IsArray()
  @ArrayMaxSize(MAX_FEATURES)
  @IsString({ each: true })
  @Length(1, 100, { each: true })
  @IsStorableText({ each: true })
  features_used!: string[];
  @Nullable() @IsInt() @Min(0) @Max(MAX_SEATS) seats_in_use!: number | null;
  @IsString() @Length(1, 20) @IsStorableText() status!: SyncStatus;
  @IsISO8601() received_at!: string;
}
