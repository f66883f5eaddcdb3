import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsInt, IsUUID, Max, Min } from 'class-validator';
import { IntegerQuery, Optional } from '../common/validation';
import type { LicenseStatus } from '../licenses/license.dto';

/** The `typ` of a full revocation list and of a delta: one can never be taken for the other. */
export const REVOCATION_LIST_TYP = 'licensing-revocation-list+jwt';
export const REVOCATION_DELTA_TYP = 'licensing-revocation-delta+jwt';

/** A version is a bigint counter in PostgreSQL; JSON numbers are exact up to 2^53 - 1. */
const MAX_VERSION = Number.MAX_SAFE_INTEGER;

export class RevocationListQueryDto {
  @ApiPropertyOptional({
    minimum: 0,
    description:
      'The version of the list the client holds: the answer is a signed delta from it to the ' +
      'current version instead of the whole list',
  })
  @IntegerQuery()
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_VERSION)
  since?: number;
}

/** Gateway → license service. `known_versions`: the versions of the request's `If-None-Match`. */
export class RevocationListRequest extends RevocationListQueryDto {
  @IsUUID('all')
  product_id!: string;

  @Optional()
  @IsArray()
  @ArrayMaxSize(16)
  @IsInt({ each: true })
  @Min(0, { each: true })
  @Max(MAX_VERSION, { each: true })
  known_versions?: number[];
}

/** The current version, and the signed list or delta; `jws` is null when a known version is current. */
export interface RevocationListReply {
  version: number;
  jws: string | null;
}

/** A license that is not active, as a list names it. */
export interface RevocationListEntry {
  serial: string;
  status: Exclude<LicenseStatus, 'active'>;
  /** When the license took that status (ISO 8601). */
  at: string;
}

/** The payload of a full list (`typ` REVOCATION_LIST_TYP). */
export interface RevocationListPayload {
  product_id: string;
  version: number;
  issued_at: string;
  next_update: string;
  entries: RevocationListEntry[];
}

/**
 * The payload of a delta (`typ` REVOCATION_DELTA_TYP): applied to the list of version `since`, it
 * gives the list of `version`. `entries` are added or replace the entry of their serial; `removed`
 * are serials active again (reinstated, or an expired license extended).
 */
export interface RevocationDeltaPayload extends RevocationListPayload {
  since: number;
  removed: { serial: string; at: string }[];
}
