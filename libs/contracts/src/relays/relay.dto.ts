import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  Equals,
  IsArray,
  IsInt,
  IsISO8601,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  Min,
} from 'class-validator';
import { PageQueryDto } from '../common/pagination.dto';
import { IsStorableText, Nullable, Optional } from '../common/validation';
import { MAX_CHECKOUT_TTL_SECONDS, MIN_CHECKOUT_TTL_SECONDS } from '../credentials/credential.dto';
import { MAX_SEATS } from '../licenses/license.dto';

/** A site name: printable text (no control character), as the relay shows and compares it. */
export const RELAY_SITE_PATTERN = /^[^\p{Cc}]+$/u;
/** The most leases one relay report carries (the relay writes several files beyond that). */
export const MAX_RELAY_REPORT_LEASES = 10_000;
/** The protected header's `typ` of a relay report. */
export const RELAY_REPORT_TYP = 'relay-report+jws';

export class CreateRelayFileDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 200,
    description: 'The name the relay was set up with (`licensing-relay init --site`): printable text',
    example: 'plant-7-floor-2',
  })
  @IsString()
  @Length(1, 200)
  @Matches(RELAY_SITE_PATTERN, { message: 'site must be printable text (no control characters)' })
  site!: string;

  @ApiProperty({
    description: "The relay's Ed25519 public key, a PEM SPKI block, as its relay request holds it",
    example: '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA…\n-----END PUBLIC KEY-----\n',
  })
  @IsString()
  @Length(1, 4096)
  public_key!: string;

  @ApiPropertyOptional({
    minimum: MIN_CHECKOUT_TTL_SECONDS,
    maximum: MAX_CHECKOUT_TTL_SECONDS,
    description:
      "Seconds the file stays valid (default: the organization's `checkout_ttl_seconds`). The file " +
      "never outlives the license's `valid_until`.",
    example: 2_592_000,
  })
  @Optional()
  @IsInt()
  @Min(MIN_CHECKOUT_TTL_SECONDS)
  @Max(MAX_CHECKOUT_TTL_SECONDS)
  ttl_seconds?: number;
}

/** What the gateway sends the license service: the license, the relay, and the TTL resolved. */
export class CreateRelayFileMessage {
  @IsUUID('all')
  license_id!: string;

  @IsString()
  @Length(1, 200)
  @Matches(RELAY_SITE_PATTERN)
  site!: string;

  @IsString()
  @Length(1, 4096)
  public_key!: string;

  @IsInt()
  @Min(MIN_CHECKOUT_TTL_SECONDS)
  @Max(MAX_CHECKOUT_TTL_SECONDS)
  ttl_seconds!: number;
}

export class ListRelayFilesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only the relay files of this license' })
  @Optional()
  @IsUUID('all')
  license_id?: string;
}

export class RelayFileView {
  @ApiProperty({
    format: 'uuid',
    description: 'The relay file id: the `relay.id` claim, and the `kid` of its reports',
  })
  id!: string;
  @ApiProperty({ format: 'uuid' }) license_id!: string;
  @ApiProperty({ format: 'uuid' }) product_id!: string;
  @ApiProperty() site!: string;
  @ApiProperty({ description: "The relay's public key (PEM SPKI), which verifies its reports" })
  public_key!: string;
  @ApiProperty({ format: 'date-time', description: 'When the file was signed (its `iat`)' })
  issued_at!: string;
  @ApiProperty({
    format: 'date-time',
    description: "When the file stops verifying (its `exp`): never after the license's `valid_until`",
  })
  expires_at!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class RelayFileCreatedView extends RelayFileView {
  @ApiProperty({
    description:
      "The relay file, base64 of its bytes: a license file signed now with the product's key, as a " +
      'checkout is, with the claim `relay: {id, site, public_key}`. Shown only in this answer.',
  })
  relay_file!: string;
}

export class RelayFileListView {
  @ApiProperty({ type: [RelayFileView] }) relay_files!: RelayFileView[];
  @ApiProperty() total!: number;
}

export class ImportRelayReportDto {
  @ApiProperty({
    description:
      'The relay report as `licensing-relay report export` writes it: a compact JWS (EdDSA, the ' +
      "relay's key; `kid` the relay file id)",
    example: 'eyJhbGciOiJFZERTQSIsInR5cCI6InJlbGF5LXJlcG9ydCtqd3MiLCJraWQiOiIuLi4ifQ.eyJ2IjoxfQ.c2ln',
  })
  @IsString()
  @Length(1, 2_000_000)
  report!: string;
}

export class RelayReportImportView {
  @ApiProperty({ format: 'uuid', description: "The report's own id (its `report_id`)" }) report_id!: string;
  @ApiProperty({ format: 'uuid' }) relay_file_id!: string;
  @ApiProperty({ description: 'The leases the report holds' }) leases!: number;
  @ApiProperty({
    description:
      'The distinct leases handed to analytics, each as one usage record. A lease already counted ' +
      'by an earlier upload is handed over again and still counted once.',
  })
  counted!: number;
}

/** One lease of a relay report, as the relay recorded it. */
export class RelayLeaseRecord {
  @IsUUID('all') id!: string;
  @IsString() @Length(1, 512) @IsStorableText() fingerprint!: string;
  @IsISO8601({ strict: true }) leased_at!: string;
  @Nullable() @IsISO8601({ strict: true }) ended_at!: string | null;
  @IsInt() @Min(0) @Max(MAX_SEATS) seats_in_use!: number;
}

/**
 * The signed payload of a relay report (the relay's `report export`). Unknown members are ignored.
 * Its `leases` are each checked as a RelayLeaseRecord (see `readRelayReport`).
 */
export class RelayReportPayload {
  @Equals(1) v!: 1;
  @Equals('relay_report') kind!: 'relay_report';
  @IsUUID('all') report_id!: string;
  @IsUUID('all') relay_file_id!: string;
  @IsString() site!: string;
  @IsString() serial!: string;
  @IsUUID('all') product_id!: string;
  @IsISO8601() created_at!: string;
  /** Each lease is checked on its own against RelayLeaseRecord: compiled, that is faster than nested. */
  @IsArray()
  @ArrayMaxSize(MAX_RELAY_REPORT_LEASES)
  leases!: RelayLeaseRecord[];
}
