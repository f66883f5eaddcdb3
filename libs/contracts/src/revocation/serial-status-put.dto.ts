import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsISO8601,
  IsString,
  IsUUID,
  Length,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { LICENSE_STATUSES, LicenseStatus } from '../licenses/license.dto';
import { MAX_SERIALS_PER_CHECK, SerialStatus } from './revocation.dto';

/** Present, and either null or checked: a missing field is a sender's bug, not "none". */
const NullButPresent = (): PropertyDecorator => ValidateIf((_object, value) => value !== null);

/** One entry of a write-through, checked field by field (nothing nested to descend into). */
export class SerialStatusItemDto implements SerialStatus {
  @IsString()
  @Length(1, 200)
  serial!: string;

  @IsUUID('all')
  org_id!: string;

  @IsUUID('all')
  license_id!: string;

  @IsUUID('all')
  product_id!: string;

  @IsIn(LICENSE_STATUSES)
  status!: LicenseStatus;

  @NullButPresent()
  @IsISO8601()
  revoked_at!: string | null;

  @NullButPresent()
  @IsISO8601()
  valid_until!: string | null;

  @IsInt()
  @Min(0)
  max_seats!: number;

  @IsInt()
  @Min(0)
  version!: number;
}

/**
 * revocation.cache.put.v1: statuses the license service wants cached, written by the revocation
 * service (the cache's one writer). A change is written through before the license service answers
 * its caller, so that it is visible on every online path at once; a verify miss is filled the same
 * way, without waiting. Either is refused inside Redis when older than the entry.
 */
export class SerialStatusPutDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_SERIALS_PER_CHECK)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => SerialStatusItemDto)
  statuses!: SerialStatusItemDto[];
}

/**
 * What the revocation service reads of a `license.*` event: the serial status the license service
 * built for it, validated field by field. An event's other members are not its business.
 */
export class LicenseEventRecord {
  @IsUUID('all') id!: string;
  @IsString() @Length(1, 64) type!: string;
  @IsUUID('all') org_id!: string;
  @IsISO8601() occurred_at!: string;

  @IsObject()
  @ValidateNested()
  @Type(() => SerialStatusItemDto)
  serial_status!: SerialStatusItemDto;
}
