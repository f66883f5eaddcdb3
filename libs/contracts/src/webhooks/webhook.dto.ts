import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsISO8601,
  IsObject,
  IsString,
  IsUrl,
  IsUUID,
  Length,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { IdDto } from '../common/common.dto';
import { PageQueryDto } from '../common/pagination.dto';
import { IsStorableText, Nullable, Optional } from '../common/validation';
import { EVENT_TYPES } from '../events/event-types';

/** Subscribes an endpoint to every event type, today's and those added later. */
export const ALL_EVENTS = '*';
type EventFamily<T extends string> = T extends `${infer Family}.${string}` ? Family : never;
/** `license.*`: every event type of one resource, today's and those added later. */
export type EventFamilyFilter = `${EventFamily<(typeof EVENT_TYPES)[number]>}.*`;
/** Every family filter, one per resource that publishes events (`license.*`, `product.*`, ...). */
export const EVENT_FAMILY_FILTERS = [
  ...new Set(EVENT_TYPES.map((type) => `${type.slice(0, type.indexOf('.'))}.*` as EventFamilyFilter)),
];
/** What a webhook's `events` may hold: the published event types, a family (`license.*`), or `*`. */
export const WEBHOOK_EVENT_FILTERS: readonly WebhookEventFilter[] = [
  ...EVENT_TYPES,
  ...EVENT_FAMILY_FILTERS,
  ALL_EVENTS,
];
export type WebhookEventFilter = (typeof EVENT_TYPES)[number] | EventFamilyFilter | typeof ALL_EVENTS;
/** Sent to one endpoint on request (POST /webhooks/:id/test), whatever it subscribes to; never on the stream. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';
export const MAX_WEBHOOK_URL_LENGTH = 2048;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** True when an endpoint subscribed to `filters` is to receive an event of `type`. */
export function webhookMatches(filters: readonly string[], type: string): boolean {
  return (
    filters.includes(ALL_EVENTS) ||
    filters.includes(type) ||
    filters.includes(`${type.slice(0, type.indexOf('.'))}.*`)
  );
}

const URL_OPTIONS = {
  protocols: ['http', 'https'],
  require_protocol: true,
  require_tld: false,
  require_host: true,
  allow_underscores: true,
  disallow_auth: true,
};

class WebhookFieldsDto {
  @ApiProperty({
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    example: 'https://hooks.example.com/licensing',
    description:
      'Where events are POSTed: https (http, loopback and private addresses only where the platform allows private networks)',
  })
  @IsString()
  @MaxLength(MAX_WEBHOOK_URL_LENGTH)
  @IsUrl(URL_OPTIONS, { message: 'url must be an http(s) URL without credentials' })
  url!: string;

  @ApiProperty({
    type: [String],
    enum: WEBHOOK_EVENT_FILTERS,
    minItems: 1,
    maxItems: WEBHOOK_EVENT_FILTERS.length,
    example: ['license.created', 'license.revoked'],
    description:
      "Event types to receive: a type (`license.revoked`), every type of one resource, today's and later ones (`license.*`), or `*` for every type",
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_FILTERS.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENT_FILTERS, {
    each: true,
    message: 'each of events must be an event type, a family such as "license.*", or "*"',
  })
  events!: WebhookEventFilter[];

  @ApiPropertyOptional({ type: String, maxLength: 500, nullable: true, example: 'Billing system' })
  @Nullable()
  @IsString()
  @MaxLength(500)
  @IsStorableText()
  description?: string | null;
}

export class CreateWebhookDto extends WebhookFieldsDto {}

/** PUT /webhooks/:id: any of the fields; null only where it means "none" (description). */
export class UpdateWebhookDto {
  @ApiPropertyOptional({ maxLength: MAX_WEBHOOK_URL_LENGTH })
  @Optional()
  @IsString()
  @MaxLength(MAX_WEBHOOK_URL_LENGTH)
  @IsUrl(URL_OPTIONS, { message: 'url must be an http(s) URL without credentials' })
  url?: string;

  @ApiPropertyOptional({ type: [String], enum: WEBHOOK_EVENT_FILTERS, minItems: 1 })
  @Optional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_FILTERS.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENT_FILTERS, {
    each: true,
    message: 'each of events must be an event type, a family such as "license.*", or "*"',
  })
  events?: WebhookEventFilter[];

  @ApiPropertyOptional({ type: String, maxLength: 500, nullable: true })
  @Nullable()
  @IsString()
  @MaxLength(500)
  @IsStorableText()
  description?: string | null;

  @ApiPropertyOptional({
    description: 'false pauses deliveries; true resumes them (and re-enables a disabled endpoint)',
  })
  @Optional()
  @IsBoolean()
  enabled?: boolean;
}

export class UpdateWebhookMessage extends IdDto {
  @IsObject()
  @ValidateNested()
  @Type(() => UpdateWebhookDto)
  changes!: UpdateWebhookDto;
}

export class WebhookView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() url!: string;
  @ApiProperty({ type: [String], enum: WEBHOOK_EVENT_FILTERS }) events!: string[];
  @ApiProperty({ nullable: true, type: String }) description!: string | null;
  @ApiProperty() enabled!: boolean;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Why the platform disabled the endpoint (null while enabled, or when disabled by a caller)',
  })
  disabled_reason!: string | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class WebhookCreatedView extends WebhookView {
  @ApiProperty({
    example: 'whsec_3q2+7wAAAA...',
    description: 'The signing secret, shown only in this answer',
  })
  secret!: string;
}

export class WebhookListView {
  @ApiProperty({ type: [WebhookView] }) webhooks!: WebhookView[];
  @ApiProperty() total!: number;
}

export class WebhookSecretView {
  @ApiProperty({ example: 'whsec_...', description: 'The new signing secret, shown only in this answer' })
  secret!: string;

  @ApiProperty({
    format: 'date-time',
    description: 'Until then each delivery is also signed with the previous secret (a second v1=)',
  })
  previous_secret_expires_at!: string;
}

export class WebhookTestView {
  @ApiProperty({ example: 'Test event queued for delivery' }) message!: string;
  @ApiProperty({ format: 'uuid' }) event_id!: string;
  @ApiProperty({ format: 'uuid', description: 'Follow it in GET /webhooks/:id/deliveries' })
  delivery_id!: string;
}

export class DeliveryView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) webhook_id!: string;
  @ApiProperty({ format: 'uuid' }) event_id!: string;
  @ApiProperty({ example: 'license.created' }) event_type!: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status!: DeliveryStatus;
  @ApiProperty({ description: 'Attempts made so far' }) attempts!: number;
  @ApiProperty({ nullable: true, type: Number, description: "The last attempt's HTTP status, if it got one" })
  last_status_code!: number | null;
  @ApiProperty({ nullable: true, type: String, description: 'Why the last attempt failed' })
  last_error!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'When the next attempt is due (pending only)',
  })
  next_attempt_at!: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) last_attempt_at!: string | null;
  @ApiProperty({ nullable: true, type: Number, description: 'How long the last attempt took' })
  last_duration_ms!: number | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) delivered_at!: string | null;
}

/** One delivery with the body every attempt sends. */
export class DeliveryDetailView extends DeliveryView {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The body every attempt sends, exactly: `{id, type, org_id, occurred_at, data}`',
  })
  payload!: Record<string, unknown>;
}

export class DeliveryListView {
  @ApiProperty({ type: [DeliveryView] }) deliveries!: DeliveryView[];
  @ApiProperty() total!: number;
}

export class ListDeliveriesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @Optional()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;
}

export class ListDeliveriesMessage extends ListDeliveriesQueryDto {
  @IsUUID('all')
  id!: string;
}

/**
 * What the webhook service reads of an event on LICENSING_EVENTS: the members it delivers. `type`
 * is any well-formed type, not only today's, so that an endpoint subscribed to `*` receives the
 * types added after it subscribed.
 */
export class WebhookEventRecord {
  @IsUUID('all') id!: string;
  @IsString() @Length(1, 64) @Matches(/^[a-z0-9_]+(\.[a-z0-9_]+)+$/) type!: string;
  @IsUUID('all') org_id!: string;
  @IsISO8601({ strict: true }) occurred_at!: string;
  @IsObject() data!: Record<string, unknown>;
}
