import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsInt,
  IsObject,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { IdDto } from '../common/common.dto';
import { Nullable, Optional } from '../common/validation';

export const PRODUCT_CODE_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const MAX_FEATURES = 100;
export const MAX_VALID_DAYS = 36_500;
export const MAX_HEARTBEAT_INTERVAL_SECONDS = 7 * 24 * 3600;

export class CreateProductDto {
  @ApiProperty({ minLength: 1, maxLength: 255, example: 'Photo Editor' })
  @IsString()
  @Length(1, 255)
  name!: string;

  @ApiProperty({
    minLength: 1,
    maxLength: 100,
    pattern: PRODUCT_CODE_PATTERN.source,
    example: 'photo-editor',
    description: 'Lowercase letters, digits and single hyphens; unique in the organization; immutable',
  })
  @IsString()
  @Length(1, 100)
  @Matches(PRODUCT_CODE_PATTERN, { message: 'code must be lowercase letters, digits and single hyphens' })
  code!: string;

  @ApiPropertyOptional({ maxLength: 10_000, default: '' })
  @Optional()
  @IsString()
  @MaxLength(10_000)
  description?: string;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_FEATURES, example: ['pro', 'export'] })
  @Optional()
  @IsArray()
  @ArrayMaxSize(MAX_FEATURES)
  @IsString({ each: true })
  @Length(1, 100, { each: true })
  default_features?: string[];

  @ApiPropertyOptional({
    minimum: 0,
    maximum: MAX_VALID_DAYS,
    default: 365,
    description: '0 means perpetual',
  })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_VALID_DAYS)
  default_valid_days?: number;

  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true })
  @Nullable()
  @IsUUID('all')
  key_pair_id?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    nullable: true,
    description: 'Seat cap across every license; null: max_seats only',
  })
  @Nullable()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  max_concurrent_activations?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_HEARTBEAT_INTERVAL_SECONDS,
    nullable: true,
    description: 'Seconds an activation may go without a heartbeat; null: no heartbeat required',
  })
  @Nullable()
  @IsInt()
  @Min(1)
  @Max(MAX_HEARTBEAT_INTERVAL_SECONDS)
  activation_heartbeat_interval?: number | null;
}

/**
 * Every field optional, none nullable except those where null means "none". `code` is absent, so
 * sending it is an unknown field and a 400. (PartialType is not used: it would let `null` through.)
 */
export class UpdateProductDto extends OmitType(CreateProductDto, ['code', 'name'] as const) {
  @ApiPropertyOptional({ minLength: 1, maxLength: 255 })
  @Optional()
  @IsString()
  @Length(1, 255)
  name?: string;
}

export class UpdateProductMessage extends IdDto {
  @IsObject()
  @ValidateNested()
  @Type(() => UpdateProductDto)
  changes!: UpdateProductDto;
}

export class ProductView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() code!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: [String] }) default_features!: string[];
  @ApiProperty() default_valid_days!: number;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) key_pair_id!: string | null;
  @ApiProperty({ nullable: true, type: Number }) max_concurrent_activations!: number | null;
  @ApiProperty({ nullable: true, type: Number }) activation_heartbeat_interval!: number | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class ProductListView {
  @ApiProperty({ type: [ProductView] }) products!: ProductView[];
  @ApiProperty() total!: number;
}

export class ProductPublicKeyView {
  @ApiProperty({ format: 'uuid' }) product_id!: string;
  @ApiProperty() product_name!: string;
  @ApiProperty() product_code!: string;
  @ApiProperty({ description: 'PEM (SPKI); safe to ship inside applications' }) public_key!: string;
  @ApiProperty({ enum: ['ed25519', 'ecdsa-p256', 'rsa-3072'] }) algorithm!: string;
  @ApiProperty({ format: 'uuid' }) key_pair_id!: string;
}
