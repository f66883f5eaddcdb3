import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsIn,
  IsISO8601,
  IsObject,
  IsString,
  IsUUID,
  Length,
  Matches,
  ValidateNested,
} from 'class-validator';
import { Nullable } from '../common/validation';
import { LICENSE_STATUSES, LicenseStatus } from '../licenses/license.dto';
import { MAX_SERIALS_PER_CHECK } from './revocation.dto';

/** One connection follows at most as many serials as one check-revocation call may ask about. */
export const MAX_SERIALS_PER_STREAM = MAX_SERIALS_PER_CHECK;

/** The license events pushed to applications: the changes that decide whether a license may run. */
export const PUSHED_LICENSE_EVENTS = [
  'license.revoked',
  'license.suspended',
  'license.reinstated',
  'license.expired',
] as const;
export type PushedLicenseEvent = (typeof PUSHED_LICENSE_EVENTS)[number];

const SERIAL = '[^,\\s]{1,200}';

export class LicenseEventsQueryDto {
  @ApiProperty({
    description: `Comma-separated serials to follow, 1 to ${MAX_SERIALS_PER_STREAM}`,
    example: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC,LIC-CAD-0000000000000000',
  })
  @Matches(new RegExp(`^${SERIAL}(,${SERIAL}){0,${MAX_SERIALS_PER_STREAM - 1}}$`), {
    message: `serials must be 1 to ${MAX_SERIALS_PER_STREAM} comma-separated serials`,
  })
  serials!: string;
}

/** The `data` of a pushed event: what changed, enough to act on without another call. */
export class LicenseStatusEventView {
  @ApiProperty({ enum: PUSHED_LICENSE_EVENTS }) type!: PushedLicenseEvent;
  @ApiProperty({ example: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC' }) serial!: string;
  @ApiProperty({ enum: LICENSE_STATUSES }) status!: LicenseStatus;
  @ApiProperty({ format: 'date-time' }) occurred_at!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revoked_at!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) valid_until!: string | null;
}

/** The members of a license event's `data` (the license) that a pushed event tells. */
export class LicenseStatusRecord {
  @IsString() @Length(1, 200) serial!: string;
  @IsIn(LICENSE_STATUSES) status!: LicenseStatus;
  @Nullable() @IsISO8601() revoked_at?: string | null;
  @Nullable() @IsISO8601() valid_until?: string | null;
}

/**
 * What the gateway's push hub reads of a `license.*` event on LICENSE_EVENTS: its type, time and
 * organization, and the license's status as the API answers it. Its other members are not the
 * hub's business.
 */
export class LicenseStatusEventRecord {
  @IsString() @Length(1, 64) type!: string;
  @IsUUID('all') org_id!: string;
  @IsISO8601() occurred_at!: string;

  @IsObject()
  @ValidateNested()
  @Type(() => LicenseStatusRecord)
  data!: LicenseStatusRecord;
}
