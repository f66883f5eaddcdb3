import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsISO8601, IsObject, IsString, IsUUID, Length, ValidateNested } from 'class-validator';
import { PageQueryDto } from '../common/pagination.dto';
import { Nullable, Optional } from '../common/validation';

/** What happened to a resource; past-tense, like event types. */
export const AUDIT_ACTIONS = [
  'created',
  'updated',
  'revoked',
  'deleted',
  'suspended',
  'reinstated',
  'rotated',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_RESOURCE_TYPES = [
  'product',
  'key_pair',
  'license',
  'activation',
  'api_key',
  'license_token',
  'organization',
  'response_key',
  'webhook',
  'entitlement',
  'policy',
  'relay_file',
] as const;
export type AuditResourceType = (typeof AUDIT_RESOURCE_TYPES)[number];

/** One field's value before and after a change; `null` on the side where the resource did not exist. */
export interface AuditChange {
  from: unknown;
  to: unknown;
}
export type AuditChanges = Record<string, AuditChange>;

export class AuditActorView {
  @ApiProperty({ format: 'uuid', description: 'The API key that made the change' })
  @IsUUID('all')
  api_key_id!: string;

  @ApiProperty({ example: 'lk_Xq3v9aB', description: "The key's first 10 characters" })
  @IsString()
  @Length(1, 10)
  prefix!: string;

  @ApiProperty({ description: "The key's name" })
  @IsString()
  @Length(1, 255)
  name!: string;
}

const CHANGES_SCHEMA = {
  type: 'object',
  additionalProperties: {
    type: 'object',
    properties: {
      from: { description: 'The value before (any JSON value; null when the field was not set)' },
      to: { description: 'The value after (any JSON value; null when the field was removed)' },
    },
  },
  example: { customer_email: { from: 'ada@example.com', to: 'ada@example.org' } },
  description:
    'Field → {from, to}. Updates list the fields that changed; creates list the fields set ' +
    '(from null); deletes the fields the resource had (to null). Secrets and key material never appear.',
} as const;

export class AuditEventView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'date-time' }) occurred_at!: string;
  @ApiProperty({ enum: AUDIT_ACTIONS }) action!: AuditAction;
  @ApiProperty({ enum: AUDIT_RESOURCE_TYPES }) resource_type!: AuditResourceType;
  @ApiProperty({ format: 'uuid' }) resource_id!: string;
  @ApiProperty({ type: AuditActorView }) actor!: AuditActorView;
  @ApiProperty({ description: 'The x-request-id of the request that made the change' }) request_id!: string;
  @ApiProperty({ nullable: true, type: String, description: "The client's IP address" }) ip!: string | null;
  @ApiProperty(CHANGES_SCHEMA) changes!: AuditChanges;
}

export class AuditEventListView {
  @ApiProperty({ type: [AuditEventView] }) audit_events!: AuditEventView[];
  @ApiProperty() total!: number;
}

export class ListAuditEventsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: AUDIT_RESOURCE_TYPES })
  @Optional()
  @IsIn(AUDIT_RESOURCE_TYPES)
  resource_type?: AuditResourceType;

  @ApiPropertyOptional({ format: 'uuid' })
  @Optional()
  @IsUUID('all')
  resource_id?: string;

  @ApiPropertyOptional({ enum: AUDIT_ACTIONS })
  @Optional()
  @IsIn(AUDIT_ACTIONS)
  action?: AuditAction;

  @ApiPropertyOptional({ format: 'uuid', description: 'Only changes made with this API key' })
  @Optional()
  @IsUUID('all')
  api_key_id?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Inclusive start (occurred_at)' })
  @Optional()
  @IsISO8601({ strict: true })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Exclusive end (occurred_at)' })
  @Optional()
  @IsISO8601({ strict: true })
  to?: string;
}

/**
 * An audit entry as it travels on the AUDIT_EVENTS stream, from the service that made the change
 * to the gateway that stores it; validated on receipt with these decorators. `resource_type` is
 * not checked against today's list, so that an entry of a newer service is stored, not lost.
 */
export class AuditEntryRecord {
  @IsUUID('all') id!: string;
  @IsUUID('all') org_id!: string;
  @IsISO8601({ strict: true }) occurred_at!: string;
  @IsIn(AUDIT_ACTIONS) action!: AuditAction;
  @IsString() @Length(1, 40) resource_type!: AuditResourceType;
  @IsUUID('all') resource_id!: string;
  @IsObject() @ValidateNested() @Type(() => AuditActorView) actor!: AuditActorView;
  @IsString() @Length(1, 128) request_id!: string;
  @Nullable() @IsString() @Length(1, 64) ip!: string | null;
  @IsObject() changes!: AuditChanges;
}

const AUDIT_SUBJECT_PREFIX = 'licensing.audit.';

export function auditSubject(orgId: string): string {
  return `${AUDIT_SUBJECT_PREFIX}${orgId}`;
}

/** Whether an outbox row's subject (without the bus namespace) is an audit entry's. */
export function isAuditSubject(subject: string): boolean {
  return subject.startsWith(AUDIT_SUBJECT_PREFIX);
}

/**
 * A message of AUDIT_EVENTS holds one entry (a JSON object), or the entries of one organization,
 * its subject's, as a JSON array of at most this many: the outbox relay sends the entries of a
 * batch together, one message per organization.
 */
export const AUDIT_ENTRIES_PER_MESSAGE = 500;
