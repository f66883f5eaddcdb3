import { Type } from 'class-transformer';
import {
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsString,
  IsUUID,
  Min,
  ValidateNested,
} from 'class-validator';
import { Nullable } from '../common/validation';

/**
 * What the license service keeps of a product: enough to sign licenses, apply defaults and enforce
 * seats without calling the product service on every request. It comes from the product's events,
 * and the product service also sends it once a change has committed so that the very next license
 * sees it. `updated_at` orders the versions: an older one never replaces a newer one.
 */
export class CatalogProductDto {
  @IsUUID('all') id!: string;
  @IsString() code!: string;
  @IsString() name!: string;
  @Nullable() @IsUUID('all') key_pair_id!: string | null;
  @IsArray() @IsString({ each: true }) default_features!: string[];
  @IsInt() @Min(0) default_valid_days!: number;
  @Nullable() @IsInt() max_concurrent_activations!: number | null;
  @Nullable() @IsInt() activation_heartbeat_interval!: number | null;
  @IsISO8601() updated_at!: string;
}

export const PRODUCT_EVENT_TYPES = ['product.created', 'product.updated', 'product.deleted'] as const;

/**
 * What the license service reads of a `product.*` event: its type and the product as it was after
 * the change (the product's API view, of which the catalog's fields are a part).
 */
export class ProductEventRecord {
  @IsUUID('all') id!: string;
  @IsIn(PRODUCT_EVENT_TYPES) type!: (typeof PRODUCT_EVENT_TYPES)[number];
  @IsUUID('all') org_id!: string;
  @IsISO8601() occurred_at!: string;

  @IsObject()
  @ValidateNested()
  @Type(() => CatalogProductDto)
  data!: CatalogProductDto;
}
