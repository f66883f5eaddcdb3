import { IsArray, IsInt, IsString, IsUUID, Min } from 'class-validator';
import { Nullable } from '../common/validation';

/**
 * What the license service keeps of a product: enough to sign licenses, apply defaults and enforce
 * seats without calling the product service on every request. The product service sends it on
 * every create and update, inside its own transaction.
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
}
